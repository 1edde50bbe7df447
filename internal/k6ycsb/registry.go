package k6ycsb

import "sync"

// registry holds what all virtual users of the process share, created by the first one to
// ask under a key derived from the options. A failed creation is remembered too: every user
// reports the same error instead of retrying a refused connection hundreds of times.
type registry[T any] struct {
	mu      sync.Mutex
	entries map[string]*entry[T]
}

type entry[T any] struct {
	once sync.Once
	val  T
	err  error
}

func (r *registry[T]) get(key string, create func() (T, error)) (T, error) {
	r.mu.Lock()
	if r.entries == nil {
		r.entries = map[string]*entry[T]{}
	}
	e, ok := r.entries[key]
	if !ok {
		e = &entry[T]{}
		r.entries[key] = e
	}
	r.mu.Unlock()
	e.once.Do(func() { e.val, e.err = create() })
	return e.val, e.err
}
