package faultstore_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/bolt"
	"github.com/wfd-dev/wfd/persistence/faultstore"
	"github.com/wfd-dev/wfd/persistence/storetest"
)

// open returns a double over a real bbolt store in a temporary file,
// closed when the test ends.
func open(t *testing.T) *faultstore.Store {
	t.Helper()
	real, err := bolt.Open(filepath.Join(t.TempDir(), "wfd.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	fs := faultstore.New(real)
	t.Cleanup(func() {
		if err := fs.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return fs
}

func handler(id string) persistence.Change {
	now := time.Now()
	return persistence.Change{Handler: persistence.Handler{
		ID: id, Workflow: "w", Status: persistence.StatusRunning, Residency: persistence.ResidencyActive,
		CreatedAt: now, UpdatedAt: now,
	}, Snapshot: []byte("snapshot of " + id)}
}

// TestConformanceThroughDouble runs the store conformance suite through a
// double with no functions set: every method passes through unchanged.
func TestConformanceThroughDouble(t *testing.T) {
	storetest.Run(t, func(t *testing.T) persistence.Store {
		real, err := bolt.Open(filepath.Join(t.TempDir(), "wfd.db"), bolt.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		return faultstore.New(real)
	})
}

func TestCountsEveryCall(t *testing.T) {
	ctx := t.Context()
	fs := open(t)
	if err := fs.Write(ctx, handler("a"), handler("b")); err != nil {
		t.Fatal(err)
	}
	failed := errors.New("injected")
	fs.Update(func(f *faultstore.Funcs) {
		f.GetHandlerFunc = func(context.Context, string) (persistence.Handler, error) { return persistence.Handler{}, failed }
	})
	for _, id := range []string{"a", "b", "c"} {
		if _, err := fs.GetHandler(ctx, id); !errors.Is(err, failed) {
			t.Fatalf("GetHandler(%s): %v", id, err)
		}
	}
	if _, err := fs.LoadSnapshot(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.GetWorkflow(ctx, "w", ""); !errors.Is(err, persistence.ErrNotFound) {
		t.Fatalf("GetWorkflow: %v", err)
	}
	if counts, err := fs.CountVersions(ctx, "w"); err != nil || len(counts) != 1 || counts[0].Count != 2 {
		t.Fatalf("CountVersions = %v, %v; want the two handlers under one line", counts, err)
	}
	if err := fs.SetCurrentWorkflow(ctx, "w", "v1"); !errors.Is(err, persistence.ErrNotFound) {
		t.Fatalf("SetCurrentWorkflow: %v", err)
	}
	for _, c := range []struct {
		method string
		got    int64
		want   int64
	}{
		{"Write", fs.Calls.Write.Load(), 1},
		{"GetHandler", fs.Calls.GetHandler.Load(), 3}, // answered by the function: counted too
		{"LoadSnapshot", fs.Calls.LoadSnapshot.Load(), 1},
		{"GetWorkflow", fs.Calls.GetWorkflow.Load(), 1},
		{"PutWorkflow", fs.Calls.PutWorkflow.Load(), 0},
		{"CountVersions", fs.Calls.CountVersions.Load(), 1},
		{"SetCurrentWorkflow", fs.Calls.SetCurrentWorkflow.Load(), 1},
		{"Count", fs.Calls.Count.Load(), 0},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d calls counted, want %d", c.method, c.got, c.want)
		}
	}
}

// TestInjectedFaults: a function answers its method's calls and can pass
// some through; nil in Update, or Reset, passes them all through again.
func TestInjectedFaults(t *testing.T) {
	unavailable := fmt.Errorf("%w: injected", persistence.ErrUnavailable)
	for _, tc := range []struct {
		name string
		// write is the WriteFunc of the double fs.
		write func(fs *faultstore.Store) func(context.Context, ...persistence.Change) error
		// failed lists which of six Writes must fail.
		failed []bool
	}{
		{"pass through", nil, []bool{false, false, false, false, false, false}},
		{"fail every call", func(*faultstore.Store) func(context.Context, ...persistence.Change) error {
			return func(context.Context, ...persistence.Change) error { return unavailable }
		}, []bool{true, true, true, true, true, true}},
		{"fail the second call only", func(fs *faultstore.Store) func(context.Context, ...persistence.Change) error {
			return func(ctx context.Context, cs ...persistence.Change) error {
				if fs.Calls.Write.Load() == 2 {
					return unavailable
				}
				return fs.Inner().Write(ctx, cs...)
			}
		}, []bool{false, true, false, false, false, false}},
		{"fail every third call", func(fs *faultstore.Store) func(context.Context, ...persistence.Change) error {
			return func(ctx context.Context, cs ...persistence.Change) error {
				if fs.Calls.Write.Load()%3 == 0 {
					return unavailable
				}
				return fs.Inner().Write(ctx, cs...)
			}
		}, []bool{false, false, true, false, false, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			fs := open(t)
			if tc.write != nil {
				fs.Update(func(f *faultstore.Funcs) { f.WriteFunc = tc.write(fs) })
			}
			for i, wantFail := range tc.failed {
				id := fmt.Sprintf("h%d", i)
				err := fs.Write(ctx, handler(id))
				if wantFail != (err != nil) || (err != nil && !errors.Is(err, persistence.ErrUnavailable)) {
					t.Fatalf("Write %d: %v, want failed=%v", i+1, err, wantFail)
				}
				// What failed is not in the store; what passed is.
				_, err = fs.Inner().GetHandler(ctx, id)
				if stored := err == nil; stored == wantFail {
					t.Fatalf("after Write %d (failed=%v): GetHandler: %v", i+1, wantFail, err)
				}
			}
			fs.Reset()
			if err := fs.Write(ctx, handler("after-reset")); err != nil {
				t.Fatalf("Write after Reset: %v", err)
			}
		})
	}
}

// TestHoldsACallUntilReleased: a function that waits for the test delays
// its call, and only that call: other methods go on meanwhile.
func TestHoldsACallUntilReleased(t *testing.T) {
	ctx := t.Context()
	fs := open(t)
	entered, release := make(chan struct{}), make(chan struct{})
	fs.Update(func(f *faultstore.Funcs) {
		f.WriteFunc = func(ctx context.Context, cs ...persistence.Change) error {
			close(entered)
			<-release
			return fs.Inner().Write(ctx, cs...)
		}
	})
	done := make(chan error, 1)
	go func() { done <- fs.Write(ctx, handler("held")) }()
	<-entered
	if _, err := fs.GetHandler(ctx, "held"); !errors.Is(err, persistence.ErrNotFound) {
		t.Fatalf("GetHandler while the Write is held: %v, want not found", err)
	}
	select {
	case err := <-done:
		t.Fatalf("the held Write returned before it was released: %v", err)
	default:
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := fs.GetHandler(ctx, "held"); err != nil {
		t.Fatalf("GetHandler after the Write: %v", err)
	}
}

// TestUpdateWhileInUse changes the functions while other goroutines call
// the store; run with -race, it shows swapping is safe. Every call is
// answered by the failing function or by the real store, never by a mix,
// and the swaps go on until many calls have seen each.
func TestUpdateWhileInUse(t *testing.T) {
	ctx := t.Context()
	fs := open(t)
	if err := fs.Write(ctx, handler("a")); err != nil {
		t.Fatal(err)
	}
	failed := errors.New("injected")
	var real, faulty atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				h, err := fs.GetHandler(ctx, "a")
				switch {
				case err == nil && h.ID == "a":
					real.Add(1)
				case errors.Is(err, failed) && h.ID == "":
					faulty.Add(1)
				default:
					t.Errorf("GetHandler: %+v, %v", h, err)
					return
				}
			}
		})
	}
	for i := 0; (real.Load() < 100 || faulty.Load() < 100) && !t.Failed(); i++ {
		if i%2 == 0 {
			fs.Update(func(f *faultstore.Funcs) {
				f.GetHandlerFunc = func(context.Context, string) (persistence.Handler, error) { return persistence.Handler{}, failed }
			})
		} else {
			fs.Reset()
		}
		runtime.Gosched()
	}
	close(stop)
	wg.Wait()
	if got, want := fs.Calls.GetHandler.Load(), real.Load()+faulty.Load(); got != want {
		t.Fatalf("%d GetHandler calls counted, %d made", got, want)
	}
}

// TestEveryMethodHasAFunc: each method of persistence.Store has its
// function in Funcs, with the method's signature, and its counter in
// Calls, so a method added to the interface cannot be missed here.
func TestEveryMethodHasAFunc(t *testing.T) {
	store := reflect.TypeFor[persistence.Store]()
	funcs, calls := reflect.TypeFor[faultstore.Funcs](), reflect.TypeFor[faultstore.Calls]()
	for i := range store.NumMethod() {
		m := store.Method(i)
		f, ok := funcs.FieldByName(m.Name + "Func")
		if !ok || f.Type != m.Type {
			t.Errorf("Funcs.%sFunc: %v, want a field of type %v", m.Name, f.Type, m.Type)
		}
		if _, ok := calls.FieldByName(m.Name); !ok {
			t.Errorf("Calls.%s is missing", m.Name)
		}
	}
}
