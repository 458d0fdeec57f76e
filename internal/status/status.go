// Package status defines where a handler is in its life, once for the
// engine and the store: engine.Status and persistence.Status are aliases of
// Status, so the server passes a status between them without a conversion,
// and neither package imports the other. Its values are those of the API's
// wfd.v1.HandlerStatus and of the store's encoding.
package status

import "fmt"

// Status is where a handler is in its life. The zero value is unspecified:
// no handler has it, and the store never holds it.
type Status int

// Handler statuses. Completed, Failed and Cancelled are terminal.
const (
	Running Status = iota + 1
	Completed
	Failed
	Cancelled
)

// All lists every valid status, in numeric order.
func All() []Status {
	return []Status{Running, Completed, Failed, Cancelled}
}

// Valid reports whether s is one of the defined statuses.
func (s Status) Valid() bool { return s >= Running && s <= Cancelled }

// Terminal reports whether a handler with status s has ended.
func (s Status) Terminal() bool { return s >= Completed && s <= Cancelled }

func (s Status) String() string {
	switch s {
	case 0:
		return "unspecified"
	case Running:
		return "running"
	case Completed:
		return "completed"
	case Failed:
		return "failed"
	case Cancelled:
		return "cancelled"
	default:
		return fmt.Sprintf("Status(%d)", int(s))
	}
}
