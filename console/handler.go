package console

import (
	"bytes"
	"compress/gzip"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"
)

// Prefix is where the console lives; the front end is built for it (vite's
// base).
const Prefix = "/ui/"

// contentSecurityPolicy lets the page load only its own files and call only
// its own origin. 'unsafe-eval' is for ajv, which compiles each JSON Schema
// the forms validate into a function; inline styles are the positions the
// virtualized lists set.
const contentSecurityPolicy = "default-src 'self'; script-src 'self' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"

// Handler serves files (the bundle, Files() when nil) under Prefix: an
// asset by its path, with a year-long immutable cache (their names change
// with their content); any other path below Prefix gets index.html, which
// must be revalidated each time (no-cache), so that the front end's own
// router shows the page. A missing asset is 404, and /ui redirects to /ui/.
// Answers are gzipped for clients that accept it.
func Handler(files fs.FS) http.Handler {
	if files == nil {
		files = Files()
	}
	return &handler{files: files, gz: map[string]*gzipped{}}
}

type handler struct {
	files fs.FS
	mu    sync.Mutex
	gz    map[string]*gzipped
}

// gzipped is a file compressed once, when first asked for.
type gzipped struct {
	once sync.Once
	data []byte
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	p := r.URL.Path
	if p == strings.TrimSuffix(Prefix, "/") {
		http.Redirect(w, r, Prefix, http.StatusMovedPermanently)
		return
	}
	rel, ok := strings.CutPrefix(p, Prefix)
	if !ok {
		http.NotFound(w, r)
		return
	}
	rel = strings.TrimPrefix(path.Clean("/"+rel), "/")
	hdr := w.Header()
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")
	if strings.HasPrefix(rel, "assets/") {
		data, err := fs.ReadFile(h.files, rel)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		hdr.Set("Cache-Control", "public, max-age=31536000, immutable")
		h.write(w, r, rel, data)
		return
	}
	// Every other path is a page of the front end's router.
	data, err := fs.ReadFile(h.files, "index.html")
	if err != nil {
		http.Error(w, "console: the bundle has no index.html (build it: console/test.sh)", http.StatusInternalServerError)
		return
	}
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("Content-Security-Policy", contentSecurityPolicy)
	hdr.Set("X-Frame-Options", "DENY")
	h.write(w, r, "index.html", data)
}

// write answers with data, gzipped when the client takes it and it pays.
func (h *handler) write(w http.ResponseWriter, r *http.Request, name string, data []byte) {
	hdr := w.Header()
	ctype := mime.TypeByExtension(path.Ext(name))
	if ctype == "" {
		ctype = http.DetectContentType(data)
	}
	hdr.Set("Content-Type", ctype)
	hdr.Add("Vary", "Accept-Encoding")
	if len(data) > 1024 && acceptsGzip(r) {
		if z := h.gzip(name, data); len(z) < len(data) {
			hdr.Set("Content-Encoding", "gzip")
			data = z
		}
	}
	// ServeContent answers Range and If-Modified-Since; the embedded
	// files have no modification time, so the zero time turns that off.
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(data))
}

func (h *handler) gzip(name string, data []byte) []byte {
	h.mu.Lock()
	g := h.gz[name]
	if g == nil {
		g = &gzipped{}
		h.gz[name] = g
	}
	h.mu.Unlock()
	g.once.Do(func() {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		_, _ = zw.Write(data)
		_ = zw.Close()
		g.data = b.Bytes()
	})
	return g.data
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(enc), "gzip") && strings.ReplaceAll(strings.TrimSpace(q), " ", "") != "q=0" {
			return true
		}
	}
	return false
}
