package attrs_test

import (
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/attrs"
	"github.com/wfd-dev/wfd/internal/status"
)

// The life of search attributes: a workflow declares them, a handler is
// given some at start, a query finds it.
func Example() {
	schema, err := attrs.ParseSchema(map[string]string{"customer": "string", "amount": "int", "tags": "keyword_list"})
	if err != nil {
		panic(err)
	}
	// What the API receives at start, checked and typed; then stored.
	st, _ := structpb.NewStruct(map[string]any{"customer": "acme", "amount": 120, "tags": []any{"urgent"}})
	set, err := schema.Convert(st)
	if err != nil {
		panic(err)
	}
	stored, _ := attrs.Encode(set)
	set, _ = attrs.Decode(stored)

	// A step's update: a null deletes.
	update, _ := schema.Convert(&structpb.Struct{Fields: map[string]*structpb.Value{"tags": structpb.NewNullValue()}})
	set = attrs.Merge(set, update)

	// A wrong value is refused, naming the attribute.
	bad, _ := structpb.NewStruct(map[string]any{"amount": "x"})
	_, err = schema.Convert(bad)
	fmt.Println(err)

	// A query: parsed, checked against the schema, evaluated, planned.
	q, err := attrs.Parse(`customer = "acme" and amount > 100 and status = running order by amount desc`)
	if err != nil {
		panic(err)
	}
	if err := q.Check(schema); err != nil {
		panic(err)
	}
	b := attrs.Builtins{Workflow: "expense", Status: status.Running, CreatedAt: time.Now()}
	fmt.Println(q.Match(b, set))
	for _, term := range q.Plan().Terms {
		fmt.Println("index term:", term.Field, term.Values, term.Lower)
	}

	// Malformed and ill-typed queries name the position.
	_, err = attrs.Parse(`customer = "acme" and amount >`)
	fmt.Println(err)
	q, _ = attrs.Parse(`customer = "acme" and amount > "100"`)
	fmt.Println(q.Check(schema))
	q, _ = attrs.Parse(`customer = "acme" or amount > 100`)
	_ = q.Check(schema)
	fmt.Println(q.Plan().Reason != "")
	// Output:
	// attribute "amount": want int, got string "x"
	// true
	// index term: customer ["acme"] <nil>
	// index term: amount [] &{100 false}
	// index term: status ["running"] <nil>
	// position 31: expected a value after ">"
	// position 32: "amount" is an int: want an integer, got "100"
	// true
}
