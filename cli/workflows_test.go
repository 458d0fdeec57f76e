package cli_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares out with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, out string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cli -run %s -update to write it)", err, t.Name())
	}
	if out != string(want) {
		t.Errorf("output differs from %s (-update rewrites it)\ngot:\n%s\nwant:\n%s", path, out, want)
	}
}

// TestWorkflows: the list shows, per workflow, whether its input has a
// schema and the event types it takes from outside, at any time or while
// a step waits; a workflow by name shows its schemas in full.
func TestWorkflows(t *testing.T) {
	addr := serve(t)
	golden(t, "workflows.golden", ok(t, "workflows", "--addr", addr))
	for _, name := range []string{"approval", "notebook", "expense", "echo"} {
		golden(t, "workflows-"+name+".golden", ok(t, "workflows", name, "--addr", addr))
	}

	var w wfdv1.Workflow
	if err := protojson.Unmarshal([]byte(ok(t, "workflows", "approval", "--json", "--addr", addr)), &w); err != nil {
		t.Fatal(err)
	}
	if et := w.GetEventTypes(); len(et) != 1 || et[0].GetType() != "approval" || et[0].GetExternal() ||
		et[0].GetSchema().GetFields()["required"].GetListValue().GetValues()[0].GetStringValue() != "approved" || w.GetInputSchema() == nil {
		t.Fatalf("workflows approval --json: %v", &w)
	}

	r := wfd(t, "workflows", "nope", "--addr", addr)
	if r.code != 1 || r.stdout != "" || r.stderr != "wfd: not_found: unknown workflow: \"nope\"\n" {
		t.Fatalf("workflows nope: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if r := wfd(t, "workflows", "a", "b", "--addr", addr); r.code != 2 || !strings.Contains(r.stderr, "wrong number of arguments") {
		t.Fatalf("workflows a b: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestSchemaRefusals: run and send exit 1 with the schema's complaint,
// naming the fields, and change nothing.
func TestSchemaRefusals(t *testing.T) {
	addr := serve(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "order", "--id", "o-1"}, `wfd: invalid_argument: invalid input: workflow "order": the input does not match the workflow's input schema: at '': missing property 'order_id'` + "\n"},
		{[]string{"run", "batch", "--input", `{"n": "five"}`}, `at '/n': got string, want integer`},
	} {
		r := wfd(t, append(c.args, "--addr", addr)...)
		if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, c.want) {
			t.Errorf("wfd %s: exit %d, stdout %q, stderr %q; want %q", strings.Join(c.args, " "), r.code, r.stdout, r.stderr, c.want)
		}
	}
	if r := wfd(t, "get", "o-1", "--addr", addr); r.code != 1 || !strings.Contains(r.stderr, "not_found") {
		t.Errorf("get o-1 after a refused run: exit %d, %q", r.code, r.stdout)
	}

	id := field(ok(t, "run", "approval", "--addr", addr))
	eventually(t, "approval is idle", func() bool { return strings.Contains(ok(t, "get", id, "--addr", addr), "idle since") })
	before := ok(t, "get", id, "--addr", addr)
	r := wfd(t, "send", id, "approval", `{"approved": "yes"}`, "--addr", addr)
	want := `wfd: invalid_argument: invalid event: workflow "approval": the data of event "approval" does not match its schema: at '/approved': got string, want boolean` + "\n"
	if r.code != 1 || r.stdout != "" || r.stderr != want {
		t.Fatalf("send a bad answer: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if after := ok(t, "get", id, "--addr", addr); after != before {
		t.Fatalf("a refused event changed the handler:\n%s\nwas:\n%s", after, before)
	}
	ok(t, "send", id, "approval", `{"approved": true}`, "--addr", addr)
}
