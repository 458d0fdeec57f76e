package console

import (
	"embed"
	"io/fs"
)

// dist is the built bundle (vite build): index.html and assets/ with
// content-hashed names.
//
//go:embed all:dist
var dist embed.FS

// Files returns the bundle, rooted at dist/.
func Files() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic("console: the embedded bundle has no dist directory: " + err.Error())
	}
	return sub
}
