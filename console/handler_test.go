package console_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/wfd-dev/wfd/console"
)

func get(t *testing.T, h http.Handler, method, path string, headers map[string]string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, r *http.Response) string {
	t.Helper()
	var rd io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			t.Fatal(err)
		}
		rd = zr
	}
	b, err := io.ReadAll(rd)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestHandler: the embedded bundle's index.html answers every page of the
// front end's router (no-cache), its hashed assets are served with their
// content types and a long cache (gzipped when asked), and the rest is
// 404, 405 or a redirect.
func TestHandler(t *testing.T) {
	h := console.Handler(nil)

	index := get(t, h, http.MethodGet, "/ui/", nil)
	html := body(t, index)
	if index.StatusCode != http.StatusOK || !strings.Contains(html, `<div id="root">`) {
		t.Fatalf("GET /ui/: %d %q", index.StatusCode, html)
	}
	for k, want := range map[string]string{
		"Content-Type":           "text/html; charset=utf-8",
		"Cache-Control":          "no-cache",
		"X-Content-Type-Options": "nosniff",
	} {
		if got := index.Header.Get(k); got != want {
			t.Errorf("GET /ui/ %s = %q, want %q", k, got, want)
		}
	}
	if csp := index.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "connect-src 'self'") {
		t.Errorf("Content-Security-Policy %q does not keep calls to the page's origin", csp)
	}

	// A page of the router (a reload, a link opened in a new tab).
	for _, p := range []string{"/ui/handlers/h-1", "/ui/inbox?assignee=ada", "/ui/tasks/t%2F1"} {
		r := get(t, h, http.MethodGet, p, nil)
		if got := body(t, r); r.StatusCode != http.StatusOK || got != html || r.Header.Get("Cache-Control") != "no-cache" {
			t.Errorf("GET %s: %d, cache %q, index.html: %v", p, r.StatusCode, r.Header.Get("Cache-Control"), got == html)
		}
	}

	// Every asset index.html names.
	assets := regexp.MustCompile(`(?:src|href)="(/ui/assets/[^"]+)"`).FindAllStringSubmatch(html, -1)
	if len(assets) < 2 {
		t.Fatalf("index.html names %d assets, want a script and a stylesheet:\n%s", len(assets), html)
	}
	for _, m := range assets {
		p := m[1]
		want := "text/javascript; charset=utf-8"
		if strings.HasSuffix(p, ".css") {
			want = "text/css; charset=utf-8"
		}
		plain := get(t, h, http.MethodGet, p, nil)
		plainBody := body(t, plain)
		if plain.StatusCode != http.StatusOK || plain.Header.Get("Content-Type") != want || plain.Header.Get("Content-Encoding") != "" {
			t.Errorf("GET %s: %d %q %q", p, plain.StatusCode, plain.Header.Get("Content-Type"), plain.Header.Get("Content-Encoding"))
		}
		if cc := plain.Header.Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
			t.Errorf("GET %s: Cache-Control %q", p, cc)
		}
		// Gzipped when it pays (past 1 KiB).
		wantEnc := ""
		if len(plainBody) > 1024 {
			wantEnc = "gzip"
		}
		zipped := get(t, h, http.MethodGet, p, map[string]string{"Accept-Encoding": "gzip, br"})
		if enc, got := zipped.Header.Get("Content-Encoding"), body(t, zipped); enc != wantEnc || got != plainBody {
			t.Errorf("GET %s with gzip: encoding %q (want %q), same content as plain: %v", p, enc, wantEnc, got == plainBody)
		}
	}

	for _, tc := range []struct {
		method, path string
		want         int
		location     string
	}{
		{http.MethodGet, "/ui", http.StatusMovedPermanently, "/ui/"},
		{http.MethodGet, "/ui/assets/missing.js", http.StatusNotFound, ""},
		{http.MethodGet, "/elsewhere", http.StatusNotFound, ""},
		{http.MethodPost, "/ui/", http.StatusMethodNotAllowed, ""},
		{http.MethodHead, "/ui/", http.StatusOK, ""},
	} {
		r := get(t, h, tc.method, tc.path, nil)
		if r.StatusCode != tc.want || r.Header.Get("Location") != tc.location {
			t.Errorf("%s %s: %d %q, want %d %q", tc.method, tc.path, r.StatusCode, r.Header.Get("Location"), tc.want, tc.location)
		}
	}
}

// TestHandlerFiles serves another bundle (the front end's dev builds, a test's).
func TestHandlerFiles(t *testing.T) {
	files := map[string][]byte{"index.html": []byte("<p>hi</p>"), "assets/a-1.js": bytes.Repeat([]byte("x;"), 10)}
	h := console.Handler(mapFS(files))
	if got := body(t, get(t, h, http.MethodGet, "/ui/anything", nil)); got != "<p>hi</p>" {
		t.Errorf("index = %q", got)
	}
	if r := get(t, h, http.MethodGet, "/ui/assets/a-1.js", map[string]string{"Accept-Encoding": "gzip"}); r.Header.Get("Content-Encoding") != "" {
		t.Errorf("a 20-byte asset was gzipped")
	}
}
func mapFS(files map[string][]byte) fs.FS {
	m := fstest.MapFS{}
	for name, data := range files {
		m[name] = &fstest.MapFile{Data: data}
	}
	return m
}
