package engine

import (
	"maps"

	"github.com/wfd-dev/wfd/attrs"
)

// AttributeSchema returns the search attributes that the registered
// versions of the workflow of that name declare, for queries over its
// handlers: every version's, so that attributes of handlers still on an
// older version stay searchable; where two versions give a name different
// types, the current version's wins (the others' values then count as
// missing, attrs.Query.Check). It is empty for an unknown workflow.
func (e *Engine) AttributeSchema(name string) attrs.Schema {
	e.mu.Lock()
	defer e.mu.Unlock()
	vs, ok := e.workflows[name]
	if !ok {
		return attrs.Schema{}
	}
	out := attrs.Schema{}
	for _, id := range vs.order {
		maps.Copy(out, vs.byID[id].def.Attributes)
	}
	maps.Copy(out, vs.byID[vs.current].def.Attributes)
	return out
}
