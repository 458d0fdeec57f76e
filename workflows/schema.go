package workflows

import "encoding/json"

// jsonSchema encodes a JSON Schema written as Go values, so that the
// bounds in it can be the constants the workflows' code uses.
func jsonSchema(s map[string]any) []byte {
	b, err := json.Marshal(s)
	if err != nil {
		panic("workflows: a schema does not encode: " + err.Error())
	}
	return b
}

// obj is the JSON Schema of an object with these properties (required:
// the names that must be present).
func obj(props map[string]any, required ...string) map[string]any {
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// nameSchema is the schema of what name() reads: a non-empty string
// (name() also bounds its bytes, which a schema cannot).
func nameSchema(description string) map[string]any {
	return map[string]any{"type": "string", "minLength": 1, "maxLength": maxNameBytes, "description": description}
}

// secondsSchema is the schema of what seconds() reads.
func secondsSchema(description string) map[string]any {
	return map[string]any{"type": "number", "minimum": 0, "maximum": maxSeconds, "description": description}
}

// anyObject is the input schema of a workflow that takes any object.
func anyObject(description string) []byte {
	return jsonSchema(map[string]any{"type": "object", "description": description})
}
