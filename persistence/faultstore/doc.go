// Package faultstore is a persistence.Store double for tests: it wraps a
// real store and lets a test replace any of its methods while the code
// under test runs, to make a call fail, fail every Nth time, wait until the
// test lets it go, or pass through; and it counts the calls of every
// method (Store.Calls), so a test can assert how many reads an action
// took.
//
// It follows litestream's mock package (Funcs has one function per
// method, with the method's signature) with two differences that tests of
// a running server need. A method whose function is nil passes the call
// to the wrapped store, so a test replaces only what it breaks and the
// rest is the real store (a bbolt file, not an in-memory fake). And the
// functions are changed through Update, which swaps the whole set
// atomically, so a test may change them while the server calls the store
// from many goroutines; Reset restores the pass-through.
//
// A function that wants the real behaviour calls the wrapped store itself:
//
//	fs := faultstore.New(real)
//	fs.Update(func(f *faultstore.Funcs) {
//		f.WriteFunc = func(ctx context.Context, changes ...persistence.Change) error {
//			if fs.Calls.Write.Load()%3 == 0 { // every third Write fails
//				return fmt.Errorf("%w: injected", persistence.ErrUnavailable)
//			}
//			return fs.Inner().Write(ctx, changes...)
//		}
//	})
//
// A method added to persistence.Store takes three lines here: its field in
// Funcs, its counter in Calls, and the method that uses both.
//
// Only persistence.Store's methods pass through: optional interfaces of the
// wrapped store (persistence/bolt's Reopen and DropMappedPages, which the
// server's reclaimer looks for) are not visible through the double.
package faultstore
