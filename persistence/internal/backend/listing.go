package backend

import (
	"errors"
	"fmt"
)

// Listing collects what a read of several values returns: the values
// that decode, in order, and the errors of those that do not (wrapping
// persistence.ErrCorrupt), which are left out, so that one damaged value
// does not hide the others.
type Listing[T any] struct {
	Items   []T
	corrupt []error
}

// Add adds item, or, if err is set, leaves it out for err.
func (l *Listing[T]) Add(item T, err error) {
	if err != nil {
		l.Skip(err)
		return
	}
	l.Items = append(l.Items, item)
}

// Skip leaves out a value for err.
func (l *Listing[T]) Skip(err error) { l.corrupt = append(l.corrupt, err) }

// Err returns nil if nothing was left out, else an error that counts the
// items left out ("2 handlers skipped") and joins their errors.
func (l *Listing[T]) Err(items string) error {
	if len(l.corrupt) == 0 {
		return nil
	}
	return fmt.Errorf("%d %s skipped: %w", len(l.corrupt), items, errors.Join(l.corrupt...))
}
