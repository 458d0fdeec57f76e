package server_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"

	client "github.com/wfd-dev/wfd/clients/go"
	"github.com/wfd-dev/wfd/clients/go/worker"
	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/server"
)

// ownerTokens are the worker credentials of the ownership tests: wally
// and eve are plain workers, grace also holds the role payroll-team.
const ownerTokens = "  - {token: wally-token, subject: wally, roles: [worker]}\n" +
	"  - {token: eve-token, subject: eve, roles: [worker]}\n" +
	"  - {token: grace-token, subject: grace, roles: [worker, payroll-team]}\n"

// payrollDef is a one-step workflow whose step says which worker ran it;
// changed varies its definition.
func payrollDef(name string, changed bool) worker.Workflow {
	def := engine.Workflow{Name: name, Steps: []engine.Step{{Name: "pay", Accepts: []string{engine.StartEvent}, Emits: []string{engine.StopEvent}}}}
	if changed {
		def.Steps[0].Workers = 3
	}
	return worker.Workflow{Definition: def}
}

// workerAs runs a worker named name with token's credentials serving wf,
// its step answering with the name; the channel gets Run's end.
func workerAs(t *testing.T, ts *testServer, token, name string, wf worker.Workflow) <-chan error {
	t.Helper()
	c, err := client.Dial(ts.addr, client.WithBearerToken(token))
	if err != nil {
		t.Fatal(err)
	}
	wf.Run = map[string]worker.StepFunc{"pay": func(_ context.Context, sc worker.Context, _ engine.Event) error {
		return sc.Send(engine.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{"by": structpb.NewStringValue(name)}})
	}}
	w, err := worker.New(c.Conn(), worker.Options{Name: name, MaxRuns: 4}, wf)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done, ended := make(chan error, 1), make(chan struct{})
	go func() {
		defer close(ended)
		done <- w.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-ended
		_ = c.Close()
	})
	return done
}

// refusedAs waits for a worker's Run to end and checks it ended with a
// PermissionDenied that names want.
func refusedAs(t *testing.T, done <-chan error) {
	const want = `belongs to "wally"` // the owner in every test here
	t.Helper()
	var err error
	select {
	case err = <-done:
	case <-ctxT(t).Done():
		t.Fatal("the worker was not refused")
	}
	if status.Code(errors.Unwrap(err)) != codes.PermissionDenied || !strings.Contains(err.Error(), want) {
		t.Fatalf("worker ended with %v, want PermissionDenied naming %q", err, want)
	}
}

// runsBy starts n handlers of workflow as admin and returns which worker
// ran each.
func runsBy(t *testing.T, ts *testServer, workflow string, n int) map[string]int {
	t.Helper()
	c := wfdv1connect.NewWorkflowServiceClient(ts.http, "http://"+ts.addr, bearer("admin-token"))
	by := map[string]int{}
	for range n {
		res, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: workflow, Input: st(t, map[string]any{}), Wait: durationpb.New(30 * time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		h := res.GetHandler()
		if h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
			t.Fatalf("handler %s is %v", h.GetHandlerId(), h.GetStatus())
		}
		by[h.GetResult().GetFields()["by"].GetStringValue()]++
	}
	return by
}

// TestWorkflowBelongsToItsWorker: with authentication on, a workflow
// belongs to the subject whose worker first registered it. Another
// worker credential can neither take its runs with an identical
// definition nor replace it with another (at 57e5085 eve did both: she
// got 2 of wally's 4 runs, and with a changed definition the next run's
// input); the refusal is PermissionDenied naming the owner. Ownership is
// stored: it holds after a restart. A grant (Options.WorkerGrants) lets
// named subjects, or the holders of a role ("group:<role>"), serve it
// too, and admin may serve anything.
func TestWorkflowBelongsToItsWorker(t *testing.T) {
	is := newJWTIssuer(t)
	dir := t.TempDir()
	grants := func(o *server.Options) {
		o.WorkerGrants = map[string][]string{"payroll-shared": {"eve", "group:payroll-team"}}
	}
	ts := startAuthServerAt(t, is, dir, ownerTokens, grants)

	workerAs(t, ts, "wally-token", "wally", payrollDef("payroll", false))
	workersServing(t, ts, "payroll", 1, bearer("admin-token"))
	refusedAs(t, workerAs(t, ts, "eve-token", "eve", payrollDef("payroll", false)))
	refusedAs(t, workerAs(t, ts, "eve-token", "eve-changed", payrollDef("payroll", true)))
	if by := runsBy(t, ts, "payroll", 4); by["wally"] != 4 {
		t.Fatalf("runs of payroll went to %v, want all 4 to wally", by)
	}

	// A grant: to eve by name, to grace by her role; not to anyone else.
	workerAs(t, ts, "wally-token", "wally-shared", payrollDef("payroll-shared", false))
	workersServing(t, ts, "payroll-shared", 1, bearer("admin-token"))
	workerAs(t, ts, "eve-token", "eve-shared", payrollDef("payroll-shared", false))
	workerAs(t, ts, "grace-token", "grace-shared", payrollDef("payroll-shared", false))
	workersServing(t, ts, "payroll-shared", 3, bearer("admin-token"))
	refusedAs(t, workerAs(t, ts, "worker-token", "other", payrollDef("payroll-shared", false)))

	// Admin may serve any workflow.
	workerAs(t, ts, "admin-token", "admin", payrollDef("payroll", false))
	workersServing(t, ts, "payroll", 2, bearer("admin-token"))

	// After a restart the owner is still wally: eve is refused even
	// while wally is away.
	ts.stop()
	ts = startAuthServerAt(t, is, dir, ownerTokens, grants)
	refusedAs(t, workerAs(t, ts, "eve-token", "eve", payrollDef("payroll", false)))
	workerAs(t, ts, "wally-token", "wally", payrollDef("payroll", false))
	workersServing(t, ts, "payroll", 1, bearer("admin-token"))
}

// TestRunCallsBoundToTheWorkersSubject: a run's StepCall and FinishRun
// are taken only from the subject whose worker the run was dispatched
// to; another worker credential that learnt the run's and worker's ids
// is refused (PermissionDenied) and the run is untouched.
func TestRunCallsBoundToTheWorkersSubject(t *testing.T) {
	is := newJWTIssuer(t)
	ts := startAuthServerAt(t, is, t.TempDir(), ownerTokens)
	wally := wfdv1connect.NewWorkerServiceClient(ts.http, "http://"+ts.addr, bearer("wally-token"))
	eve := wfdv1connect.NewWorkerServiceClient(ts.http, "http://"+ts.addr, bearer("eve-token"))
	def := &wfdv1.WorkflowDefinition{Name: "payroll-bound", Steps: []*wfdv1.StepDefinition{
		{Name: "pay", Accepts: []string{engine.StartEvent}, Emits: []string{engine.StopEvent}}}}
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	stream, err := wally.Connect(ctx, &wfdv1.ConnectRequest{Name: "wally", MaxRuns: 1, Workflows: []*wfdv1.WorkflowDefinition{def}})
	if err != nil {
		t.Fatal(err)
	}
	// Connected comes once the worker is registered and listed.
	var workerID string
	var run *wfdv1.Dispatch
	for workerID == "" && stream.Receive() {
		workerID = stream.Msg().GetConnected().GetWorkerId()
	}
	c := wfdv1connect.NewWorkflowServiceClient(ts.http, "http://"+ts.addr, bearer("admin-token"))
	if _, err := c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "payroll-bound", Input: st(t, map[string]any{})}); err != nil {
		t.Fatal(err)
	}
	for run == nil && stream.Receive() {
		run = stream.Msg().GetDispatch()
	}
	if run == nil {
		t.Fatalf("no dispatch: %v", stream.Err())
	}
	out := &structpb.Struct{Fields: map[string]*structpb.Value{"by": structpb.NewStringValue("eve")}}
	fin := &wfdv1.FinishRunRequest{RunId: run.GetRunId(), WorkerId: workerID, Outcome: wfdv1.Outcome_OUTCOME_OK,
		Sent: []*wfdv1.Event{{Type: engine.StopEvent, Data: out}}}
	if _, err := eve.FinishRun(ctxT(t), fin); connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Fatalf("eve's FinishRun of wally's run: %v, want PermissionDenied", err)
	}
	if _, err := eve.StepCall(ctxT(t), &wfdv1.StepCallRequest{RunId: run.GetRunId(), WorkerId: workerID, Seq: 1,
		Operation: &wfdv1.StepCallRequest_Get{Get: "salary"}}); connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Fatalf("eve's StepCall in wally's run: %v, want PermissionDenied", err)
	}
	out.Fields["by"] = structpb.NewStringValue("wally")
	if _, err := wally.FinishRun(ctxT(t), fin); err != nil {
		t.Fatalf("wally's FinishRun: %v", err)
	}
}
