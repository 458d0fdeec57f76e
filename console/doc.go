// Package console is wfd's web console: the built front end (dist/, made
// from the TypeScript sources beside it by `npm run build`, committed like
// generated code) embedded in the binary, and the http.Handler that serves
// it at /ui/. The console talks to wfd through the public API only, with
// @wfd/client over Connect, from the same origin: `wfd serve` serves the
// bundle and the API together on --console-addr (server.Options.Console).
package console
