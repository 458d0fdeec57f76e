package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/wfd-dev/wfd/namespace"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server"
)

// namespaceFlags is serve's --namespace: NAME or NAME=RETENTION, once per
// namespace served besides the default one.
type namespaceFlags []namespaceFlag

type namespaceFlag struct {
	name      string
	retention time.Duration // 0: --retention's; <0: forever
}

func (n *namespaceFlags) String() string {
	var out []string
	for _, f := range *n {
		out = append(out, f.name)
	}
	return strings.Join(out, ",")
}

// Set takes NAME, NAME=DURATION or NAME=forever.
func (n *namespaceFlags) Set(v string) error {
	name, ret, hasRet := strings.Cut(v, "=")
	if err := namespace.Check(name); err != nil {
		return err
	}
	if name == namespace.Default {
		return fmt.Errorf("%q is always served (its retention is --retention)", name)
	}
	f := namespaceFlag{name: name}
	switch {
	case !hasRet:
	case ret == "forever":
		f.retention = server.Off
	default:
		d, err := time.ParseDuration(ret)
		if err != nil || d <= 0 {
			return fmt.Errorf("%s: retention %q is not a positive duration (or forever)", name, ret)
		}
		f.retention = d
	}
	for _, g := range *n {
		if g.name == name {
			return fmt.Errorf("%s given twice", name)
		}
	}
	*n = append(*n, f)
	return nil
}

// namespaceSchema is the PostgreSQL schema of namespace name.
func namespaceSchema(name string) string {
	return "wfd_ns_" + strings.ReplaceAll(name, "-", "_")
}

// namespaceFile is the bbolt file of namespace name in data.
func namespaceFile(data, name string) string {
	return filepath.Join(data, "namespaces", name, "wfd.db")
}

// openNamespaces opens the store of each namespace beside the default
// one's: a bbolt file under data/namespaces, or a schema of the
// PostgreSQL database (wfd_ns_NAME). On an error it closes those it
// opened.
func openNamespaces(ctx context.Context, flags namespaceFlags, data, store string, leaseTTL time.Duration) (ns []server.Namespace, err error) {
	defer func() {
		if err != nil {
			_ = closeNamespaces(ns) // the open error is the one to report
			ns = nil
		}
	}()
	for _, f := range flags {
		s, _, oerr := openStoreAt(ctx, namespaceFile(data, f.name), store, namespaceSchema(f.name), leaseTTL)
		if oerr != nil {
			return ns, fmt.Errorf("namespace %s: %w", f.name, oerr)
		}
		ns = append(ns, server.Namespace{Name: f.name, Store: s, Retention: f.retention})
	}
	return ns, nil
}

// closeNamespaces closes the namespaces' stores.
func closeNamespaces(ns []server.Namespace) error {
	var first error
	for _, n := range ns {
		if err := n.Store.Close(); err != nil && first == nil {
			first = fmt.Errorf("namespace %s: close store: %w", n.Name, err)
		}
	}
	return first
}

// serveStores are the stores serve runs on: the default namespace's and
// the others'.
type serveStores struct {
	store      persistence.Store
	path       string // how to name store in logs
	namespaces []server.Namespace
}

// openStores opens the default namespace's store, then the others'.
func (o *serveOptions) openStores(ctx context.Context) (*serveStores, error) {
	store, path, err := openServeStore(ctx, o.data, o.store, o.leaseTTL())
	if err != nil {
		return nil, err
	}
	nss, err := openNamespaces(ctx, o.namespaces, o.data, o.store, o.leaseTTL())
	if err != nil {
		_ = store.Close()
		return nil, err
	}
	return &serveStores{store: store, path: path, namespaces: nss}, nil
}

// close closes every store.
func (s *serveStores) close() error {
	nerr := closeNamespaces(s.namespaces)
	if err := s.store.Close(); err != nil {
		return fmt.Errorf("close store: %w", err)
	}
	return nerr
}
