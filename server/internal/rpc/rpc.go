package rpc

import (
	"context"
	"log/slog"
	"time"

	"github.com/wfd-dev/wfd/engine"
	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/auth"
	"github.com/wfd-dev/wfd/server/internal/apierr"
	"github.com/wfd-dev/wfd/server/internal/live"
	"github.com/wfd-dev/wfd/server/internal/observe"
)

// Workers is what the service needs of the step workers.
type Workers interface {
	// Serving says whether workflow is defined by workers, and how many
	// connected workers serve version ("": the current one).
	Serving(workflow, version string) (byWorkers bool, connected int32)
	// ServedBy names the connected workers that serve version of
	// workflow, and says whether workers define the workflow.
	ServedBy(workflow, version string) (names []string, byWorkers bool)
	// SyncStored registers the workflows workers defined on other
	// replicas (replica mode).
	SyncStored(ctx context.Context)
	// Definition registers a version of a workflow ("": the current one)
	// that workers on another replica defined (replica mode).
	Definition(ctx context.Context, workflow, version string)
	// RouteStart refuses, with an *apierr.Owned error naming a replica
	// with its workers, a start of a version of a workflow ("": the
	// current one) served elsewhere only.
	RouteStart(ctx context.Context, workflow, version, id string) error
	// SetCurrent makes a version of a worker-defined workflow current.
	SetCurrent(ctx context.Context, workflow, version string) error
	// DeleteVersion deletes an unused version of a worker-defined
	// workflow.
	DeleteVersion(ctx context.Context, workflow, version string) error
}

// Replica is what the service needs of replica mode.
type Replica interface {
	// FillOwners names the replica each running handler of hs is live
	// on, for those live on another.
	FillOwners(ctx context.Context, hs []*wfdv1.Handler)
	// Elsewhere is an *apierr.Owned error when another live replica
	// holds handler id.
	Elsewhere(ctx context.Context, id string) error
	// Replicas lists the live replicas (none in a single process).
	Replicas(ctx context.Context) ([]persistence.Replica, error)
	// Forwarded reports whether the call of ctx was forwarded by another
	// replica.
	Forwarded(ctx context.Context) bool
	// UpgradeOn makes req, an UpgradeHandlers of the one handler owned
	// names, on the replica that holds it (owned itself if it cannot).
	UpgradeOn(ctx context.Context, owned *apierr.Owned, req *wfdv1.UpgradeHandlersRequest) (*wfdv1.UpgradeHandlersResponse, error)
}

// Options configure a Service.
type Options struct {
	Runtime   *live.Runtime
	Store     persistence.Store
	Logger    *slog.Logger
	Now       func() time.Time
	Heartbeat time.Duration
	// Streams bound what StreamEvents streams hold.
	Streams *StreamBudget
	// Draining is closed when shutdown begins.
	Draining <-chan struct{}
	Workers  Workers
	Replica  Replica
	// AuthOn: callers are authenticated (GetIdentity says so).
	AuthOn bool
	// Snapshot reads what GetStats answers.
	Snapshot func(context.Context) (observe.Snapshot, error)
	// Schedules answers the schedule methods.
	Schedules Schedules
	// Namespaces lists the namespaces the server serves where who (nil:
	// anyone, authentication is off) holds a role.
	Namespaces func(ctx context.Context, who *auth.Identity) []NamespaceInfo
}

// Schedules is what the service needs of the scheduler (the schedules
// room): the schedule methods, with the API's messages.
type Schedules interface {
	Create(ctx context.Context, s *wfdv1.Schedule, owner string) (*wfdv1.Schedule, error)
	Get(ctx context.Context, id string) (*wfdv1.Schedule, error)
	List(ctx context.Context, pageSize int, token string) ([]*wfdv1.Schedule, string, error)
	Update(ctx context.Context, s *wfdv1.Schedule, expectRevision uint64) (*wfdv1.Schedule, error)
	Delete(ctx context.Context, id string) error
	// Trigger starts a run at at (zero: now), or backfills [from, to].
	Trigger(ctx context.Context, id string, at, from, to time.Time) (*wfdv1.Schedule, []string, error)
}

// Service is wfd.v1.WorkflowService over the handler runtime.
// Every method returns plain errors; apierr.Edge, the interceptor around
// it, picks their codes.
type Service struct {
	rt        *live.Runtime
	store     persistence.Store
	log       *slog.Logger
	now       func() time.Time
	heartbeat time.Duration
	streams   *StreamBudget
	draining  <-chan struct{}
	workers   Workers
	replica   Replica
	snapshot  func(context.Context) (observe.Snapshot, error)
	// namespaces is Options.Namespaces.
	namespaces func(ctx context.Context, who *auth.Identity) []NamespaceInfo
	authOn     bool
	engine     *engine.Engine
	journal    *live.Journal
	hub        *live.Hub
	schedules  Schedules
}

// New returns the service.
func New(o Options) *Service {
	return &Service{rt: o.Runtime, store: o.Store, log: o.Logger, now: o.Now, heartbeat: o.Heartbeat, streams: o.Streams,
		draining: o.Draining, workers: o.Workers, replica: o.Replica, snapshot: o.Snapshot, authOn: o.AuthOn, namespaces: o.Namespaces,
		engine: o.Runtime.Engine(), journal: o.Runtime.Journal(), hub: o.Runtime.Hub(), schedules: o.Schedules}
}
