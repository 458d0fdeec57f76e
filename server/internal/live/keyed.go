package live

import (
	"sync"

	"github.com/wfd-dev/wfd/internal/shrink"
)

// KeyedMutex is a set of mutexes by key, created on demand and dropped when
// nobody holds or waits for them.
type KeyedMutex struct {
	mu sync.Mutex
	m  map[string]*keyedEntry
	// peak is the most keys m has held since it was last rebuilt.
	peak int
}

type keyedEntry struct {
	mu   sync.Mutex
	refs int
}

// Lock locks key and returns the function that unlocks it.
func (k *KeyedMutex) Lock(key string) (unlock func()) {
	k.mu.Lock()
	if k.m == nil {
		k.m = map[string]*keyedEntry{}
	}
	e := k.m[key]
	if e == nil {
		e = &keyedEntry{}
		k.m[key] = e
		k.peak = max(k.peak, len(k.m))
	}
	e.refs++
	k.mu.Unlock()
	e.mu.Lock()
	return func() {
		e.mu.Unlock()
		k.mu.Lock()
		if e.refs--; e.refs == 0 {
			delete(k.m, key)
		}
		k.mu.Unlock()
	}
}

// Compact rebuilds the map if it fell far below its peak (see shrink.Map);
// it reports whether it did.
func (k *KeyedMutex) Compact() bool {
	return shrink.Locked(&k.mu, &k.m, &k.peak)
}
