package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/persistence"
)

// versionHandlers stores handlers of workflow "wf" on versions "v1" and
// "v2" in several statuses and residencies, one of "wf" from before
// versions (version ""), and one of another workflow on "v1". It returns
// them by id.
func versionHandlers(t *testing.T, s persistence.Store) map[string]persistence.Handler {
	ids := newIDs(t, 7)
	specs := []struct {
		workflow, version string
		status            persistence.Status
		residency         persistence.Residency
	}{
		{"wf", "v1", persistence.StatusRunning, persistence.ResidencyActive},
		{"wf", "v1", persistence.StatusRunning, persistence.ResidencyReleased},
		{"wf", "v1", persistence.StatusCompleted, persistence.ResidencyReleased},
		{"wf", "v2", persistence.StatusRunning, persistence.ResidencyActive},
		{"wf", "v2", persistence.StatusRunning, persistence.ResidencyActive},
		{"wf", "", persistence.StatusRunning, persistence.ResidencyActive},
		{"other", "v1", persistence.StatusRunning, persistence.ResidencyActive},
	}
	out := make(map[string]persistence.Handler)
	var changes []persistence.Change
	for i, sp := range specs {
		h := newHandler(ids[i], sp.workflow)
		h.WorkflowVersion, h.Status, h.Residency = sp.version, sp.status, sp.residency
		h.CreatedAt = h.CreatedAt.Add(-time.Duration(len(specs)-i) * time.Second) // ids[i] newer than ids[i-1]
		if sp.status.Terminal() {
			h.CompletedAt = h.UpdatedAt
		}
		out[h.ID] = h
		changes = append(changes, persistence.Change{Handler: h, Create: true})
	}
	write(t, s, changes...)
	return out
}

// ids of hs (newest first) whose fields pass keep: what a listing of
// those handlers must return.
func newestIDs(hs map[string]persistence.Handler, keep func(h persistence.Handler) bool) []string {
	var ids []string
	for id, h := range hs {
		if keep(h) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	slices.Reverse(ids)
	return ids
}

// testListHandlersVersion: Query.Version keeps the handlers of one
// version of the workflow, alone and with the status and residency
// filters, across pages; Version without Workflow is ErrInvalid.
func testListHandlersVersion(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	ctx := t.Context()
	hs := versionHandlers(t, s)
	for _, q := range []persistence.Query{
		{Workflow: "wf", Version: "v1"},
		{Workflow: "wf", Version: "v2"},
		{Workflow: "other", Version: "v1"},
		{Workflow: "wf", Version: "v3"},
		{Workflow: "wf", Version: "v1", Statuses: []persistence.Status{persistence.StatusRunning}},
		{Workflow: "wf", Version: "v1", Residency: persistence.ResidencyReleased},
		{Workflow: "wf", Version: "v1", Statuses: []persistence.Status{persistence.StatusCompleted, persistence.StatusRunning},
			Residency: persistence.ResidencyActive},
		{Workflow: "wf"}, // every version, "" included
	} {
		want := newestIDs(hs, func(h persistence.Handler) bool {
			return h.Workflow == q.Workflow && (q.Version == "" || h.WorkflowVersion == q.Version) &&
				(len(q.Statuses) == 0 || slices.Contains(q.Statuses, h.Status)) &&
				(q.Residency == 0 || h.Residency == q.Residency)
		})
		all, _ := pageAll(t, fmt.Sprintf("%+v", q), 1, "", func(token string) ([]persistence.Handler, string, error) {
			q := q
			q.PageSize, q.PageToken = 1, token
			return s.ListHandlers(ctx, q)
		})
		if got := handlerIDs(all); !slices.Equal(got, want) {
			t.Errorf("ListHandlers(%+v) = %v, want %v", q, got, want)
		}
	}
	_, _, err := s.ListHandlers(ctx, persistence.Query{Version: "v1"})
	wantErr(t, "ListHandlers with Version and no Workflow", err, persistence.ErrInvalid)
	// A token is bound to its version.
	_, token, err := s.ListHandlers(ctx, persistence.Query{Workflow: "wf", Version: "v1", PageSize: 1})
	if err != nil || token == "" {
		t.Fatalf("first page of v1 = %q, %v", token, err)
	}
	_, _, err = s.ListHandlers(ctx, persistence.Query{Workflow: "wf", Version: "v2", PageToken: token})
	wantErr(t, "ListHandlers of v2 with a token of v1", err, persistence.ErrInvalid)
}

func vc(version string, st persistence.Status, r persistence.Residency, n int64) persistence.VersionCount {
	return persistence.VersionCount{Version: version, Status: st, Residency: r, Count: n}
}

// testCountVersions: CountVersions counts a workflow's handlers by
// version, status and residency, in that order, leaving out other
// workflows; the counts follow a handler's status, residency and version
// changes and its deletion.
func testCountVersions(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	ctx := t.Context()
	hs := versionHandlers(t, s)
	count := func(what string, want []persistence.VersionCount) {
		t.Helper()
		got, err := s.CountVersions(ctx, "wf")
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("CountVersions %s = %v, %v; want %v", what, got, err, want)
		}
	}
	running, completed := persistence.StatusRunning, persistence.StatusCompleted
	active, released := persistence.ResidencyActive, persistence.ResidencyReleased
	count("after the writes", []persistence.VersionCount{
		vc("", running, active, 1),
		vc("v1", running, active, 1),
		vc("v1", running, released, 1),
		vc("v1", completed, released, 1),
		vc("v2", running, active, 2),
	})

	// A v2 handler completes and is released; the v1 handler that was
	// released becomes active again; the one from before versions is
	// deleted.
	var v2, v1Released, old persistence.Handler
	for _, h := range hs {
		switch {
		case h.Workflow != "wf":
		case h.WorkflowVersion == "v2" && v2.ID == "":
			v2 = h
		case h.WorkflowVersion == "v1" && h.Status == running && h.Residency == released:
			v1Released = h
		case h.WorkflowVersion == "":
			old = h
		}
	}
	v2.Status, v2.Residency, v2.CompletedAt = completed, released, v2.UpdatedAt
	v1Released.Residency = active
	write(t, s, persistence.Change{Handler: v2}, persistence.Change{Handler: v1Released},
		persistence.Change{Handler: persistence.Handler{ID: old.ID}, Delete: true})
	count("after the changes", []persistence.VersionCount{
		vc("v1", running, active, 2),
		vc("v1", completed, released, 1),
		vc("v2", running, active, 1),
		vc("v2", completed, released, 1),
	})

	if got, err := s.CountVersions(ctx, "nobody"); err != nil || len(got) != 0 {
		t.Fatalf("CountVersions of a workflow without handlers = %v, %v", got, err)
	}
	_, err := s.CountVersions(ctx, "")
	wantErr(t, "CountVersions of no workflow", err, persistence.ErrInvalid)
}

// testRunningVersions: RunningVersions names the versions that running
// handlers run, in order, "" for handlers from before versions, and drops
// a version once none of its handlers runs.
func testRunningVersions(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	ctx := t.Context()
	hs := versionHandlers(t, s)
	running := func(what string, want ...string) {
		t.Helper()
		got, err := s.RunningVersions(ctx, "wf")
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("RunningVersions %s = %q, %v; want %q", what, got, err, want)
		}
	}
	running("after the writes", "", "v1", "v2")
	var changes []persistence.Change
	for _, h := range hs {
		if h.Workflow == "wf" && h.WorkflowVersion == "v2" {
			h.Status, h.Residency, h.CompletedAt = persistence.StatusCompleted, persistence.ResidencyReleased, h.UpdatedAt
			changes = append(changes, persistence.Change{Handler: h})
		}
	}
	write(t, s, changes...)
	running("once v2's handlers completed", "", "v1")
	if got, err := s.RunningVersions(ctx, "nobody"); err != nil || len(got) != 0 {
		t.Fatalf("RunningVersions of a workflow without handlers = %v, %v", got, err)
	}
	_, err := s.RunningVersions(ctx, "")
	wantErr(t, "RunningVersions of no workflow", err, persistence.ErrInvalid)
}
