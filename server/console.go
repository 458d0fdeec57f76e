package server

import (
	"net/http"
	"strings"
)

// ConsoleHandler serves the console's port: the web console's files
// (Options.Console) at /ui/, a redirect from / to /ui/, and everything
// else exactly as Handler does — the API with the same interceptors
// (authentication, metrics, tracing), health checks and probes — so that
// the console's page calls the public API from its own origin. An Origin
// equal to the request's own is accepted there besides
// Options.AllowedOrigins; the Host check applies as on the API port.
func (s *Server) ConsoleHandler() http.Handler {
	api := s.handler(true)
	if s.opts.Console == nil {
		return guard(api, &s.opts)
	}
	ui := hostOriginGuard(s.opts.Console, s.opts.AllowedHosts, s.opts.AllowedOrigins, true)
	return guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
			http.Redirect(w, r, "/ui/", http.StatusFound)
		case r.URL.Path == "/ui" || strings.HasPrefix(r.URL.Path, "/ui/"):
			ui.ServeHTTP(w, r)
		default:
			api.ServeHTTP(w, r)
		}
	}), &s.opts)
}
