package persistence

import "fmt"

// Residency says whether a handler is live in some replica's memory or only
// in the store. The zero value is unspecified: a Query with Residency 0
// matches any residency, and a stored Handler always has a valid one.
type Residency int

// Handler residencies.
const (
	// ResidencyActive: a replica (Handler.Owner) holds the handler live.
	ResidencyActive Residency = iota + 1
	// ResidencyReleased: the handler lives only in the store and is
	// rehydrated from its snapshot when something wakes it.
	ResidencyReleased
)

// Residencies lists every valid residency, in numeric order.
func Residencies() []Residency { return []Residency{ResidencyActive, ResidencyReleased} }

// Valid reports whether r is one of the defined residencies.
func (r Residency) Valid() bool { return r == ResidencyActive || r == ResidencyReleased }

func (r Residency) String() string {
	switch r {
	case ResidencyActive:
		return "active"
	case ResidencyReleased:
		return "released"
	default:
		return fmt.Sprintf("Residency(%d)", int(r))
	}
}
