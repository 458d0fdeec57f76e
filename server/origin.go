package server

import (
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	connectcors "connectrpc.com/cors"
	"connectrpc.com/grpchealth"

	"github.com/wfd-dev/wfd/namespace"
)

// The Host and Origin checks keep browsers from reaching the API through
// DNS rebinding (a page of evil.example whose name resolves to 127.0.0.1)
// or cross-site requests: a request whose Host header is not allowed, or
// which a browser sent from an origin that is not allowed, is refused
// with 403 before the API sees it. Allowed origins get CORS answers
// (preflights included) with the headers Connect, gRPC-Web and a bearer
// token need.

// Open paths skip the checks: load balancers, kubelets and scrapers call
// them by IP address, and they say nothing a caller could misuse.
func openPath(p string) bool {
	switch p {
	case "/healthz", "/readyz", "/metrics":
		return true
	}
	return strings.HasPrefix(p, "/"+grpchealth.HealthV1ServiceName+"/")
}

// hostOriginGuard wraps next with the checks of Options.AllowedHosts and
// Options.AllowedOrigins (nil: no check). With sameOrigin, an Origin equal
// to the request's own scheme and host is allowed too: on the console's
// port the page and the API share an origin (ConsoleHandler).
func hostOriginGuard(next http.Handler, hosts, origins []string, sameOrigin bool) http.Handler {
	if hosts == nil && origins == nil {
		return next
	}
	allowHeaders := strings.Join(append(connectcors.AllowedHeaders(), "Authorization", namespace.Header), ", ")
	allowMethods := strings.Join(connectcors.AllowedMethods(), ", ")
	expose := strings.Join(connectcors.ExposedHeaders(), ", ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if openPath(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		if hosts != nil && !hostAllowed(hosts, r.Host) {
			refuse(w, r, "wfd: host "+strconv.Quote(r.Host)+" is not allowed (--allowed-hosts)")
			return
		}
		origin := r.Header.Get("Origin")
		if origin == "" || origins == nil {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Add("Vary", "Origin")
		if !originAllowed(origins, origin) && !(sameOrigin && isSameOrigin(r, origin)) {
			refuse(w, r, "wfd: origin "+strconv.Quote(origin)+" is not allowed (--allowed-origins)")
			return
		}
		w.Header().Set("Access-Control-Allow-Origin", origin)
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			w.Header().Set("Access-Control-Allow-Methods", allowMethods)
			w.Header().Set("Access-Control-Allow-Headers", allowHeaders)
			w.Header().Set("Access-Control-Max-Age", "7200")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.Header().Set("Access-Control-Expose-Headers", expose)
		next.ServeHTTP(w, r)
	})
}

// hostAllowed: an entry is "*", a host name or address (any port), or
// host:port.
func hostAllowed(allowed []string, hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	return slices.ContainsFunc(allowed, func(a string) bool {
		return a == "*" || strings.EqualFold(a, hostport) || strings.EqualFold(strings.Trim(a, "[]"), host)
	})
}

// originAllowed: an entry is "*", an origin ("https://app.example.com",
// "http://localhost:3000") or an origin with any port ("http://localhost:*").
func originAllowed(allowed []string, origin string) bool {
	o, err := url.Parse(origin)
	if err != nil || o.Host == "" {
		return false
	}
	return slices.ContainsFunc(allowed, func(a string) bool {
		if a == "*" {
			return true
		}
		pattern, anyPort := strings.CutSuffix(a, ":*")
		p, err := url.Parse(pattern)
		if err != nil || !strings.EqualFold(p.Scheme, o.Scheme) || !strings.EqualFold(p.Hostname(), o.Hostname()) {
			return false
		}
		return anyPort || portOf(p) == portOf(o)
	})
}

// isSameOrigin: origin is the request's own scheme, host and port.
func isSameOrigin(r *http.Request, origin string) bool {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	self, err := url.Parse(scheme + "://" + r.Host)
	if err != nil || self.Host == "" {
		return false
	}
	return originAllowed([]string{self.String()}, origin)
}

func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

// LoopbackDefaults are the allowed hosts and origins the command line
// uses when the server listens on a loopback address: the loopback names
// (any port), and browser pages served from them.
func LoopbackDefaults(listenHost string) (hosts, origins []string) {
	hosts = []string{"localhost", "127.0.0.1", "::1"}
	if listenHost != "" && !slices.Contains(hosts, listenHost) {
		hosts = append(hosts, listenHost)
	}
	for _, h := range []string{"localhost", "127.0.0.1", "[::1]"} {
		origins = append(origins, "http://"+h+":*", "https://"+h+":*")
	}
	return hosts, origins
}

// IsLoopback reports whether host (a name or an address) is loopback.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// refuse answers 403 without reading the request's body. On HTTP/1.x it
// closes the connection too: net/http would otherwise read what is left
// of an unread body before answering, and wait as long as its sender
// stalls.
func refuse(w http.ResponseWriter, r *http.Request, msg string) {
	if r.ProtoMajor < 2 {
		w.Header().Set("Connection", "close")
	}
	http.Error(w, msg, http.StatusForbidden)
}
