package cli

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/url"
	"os"
	"strings"
	"time"
)

// serveDebug serves Go's pprof handlers on their own port, away from the
// API, and returns the function that stops it.
func serveDebug(addr string, log *slog.Logger) (stop func(), err error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("debug listener: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", redactedCmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	log.Info("debug endpoints", "addr", l.Addr().String(), "pprof", "/debug/pprof/")
	return func() { _ = srv.Close() }, nil
}

// redactedCmdline is pprof.Cmdline without passwords: the command line
// may carry a --store URL with one (postgres://wfd:secret@...), and the
// debug port has no authentication.
func redactedCmdline(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = fmt.Fprint(w, strings.Join(redactArgs(os.Args), "\x00"))
}

// redactArgs replaces the password of every URL among args (alone or as
// a flag's value after "=") with "xxxxx".
func redactArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		prefix, value := "", a
		if strings.HasPrefix(a, "-") {
			if k, v, ok := strings.Cut(a, "="); ok {
				prefix, value = k+"=", v
			}
		}
		if u, err := url.Parse(value); err == nil && u.User != nil {
			if _, has := u.User.Password(); has {
				value = u.Redacted()
			}
		}
		out[i] = prefix + value
	}
	return out
}
