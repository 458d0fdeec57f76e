package replica

// Who owns a handler another replica holds: the apierr.Owned naming its
// replica and address, and the owners of listed handlers.

import (
	"context"
	"time"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/internal/apierr"
)

func (r *Replica) owned(ctx context.Context, lease persistence.Lease) error {
	e := &apierr.Owned{Handler: lease.Handler, Owner: lease.Owner, Address: r.address(ctx, lease.Owner)}
	if lease.Left > 0 {
		e.Until = time.Now().Add(lease.Left)
	}
	return e
}

// address is where replica id said it can be reached ("" if it is not
// registered), from the registry as last read: every renewal reads it
// again, so a call for a handler live elsewhere costs no query for it.
// An id not known yet is looked up at once.
func (r *Replica) address(ctx context.Context, id string) string {
	r.mu.Lock()
	a, ok := r.addrs[id]
	r.mu.Unlock()
	if ok {
		return a
	}
	r.readReplicas(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.addrs[id]
}

// readReplicas refreshes the addresses of the live replicas. A replica
// that is no longer listed keeps its last address: its registration can
// expire a moment before the leases it took since its last heartbeat (a
// paused or dying replica), and a call for one of those handlers is
// refused naming where it is, not "no address".
func (r *Replica) readReplicas(ctx context.Context) {
	rs, err := r.db.Replicas(ctx)
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.addrs == nil {
		r.addrs = make(map[string]string, len(rs))
	}
	for _, rep := range rs {
		r.addrs[rep.ID] = rep.Address
	}
}

// Elsewhere is an apierr.Owned when another live replica holds handler
// id's lease: a call that does not load the handler (ReleaseHandler)
// belongs there (and is forwarded). nil when
// this replica holds it, nobody does, or the lease cannot be read (the
// call goes on here, as in a single process).
func (r *Replica) Elsewhere(ctx context.Context, id string) error {
	if r == nil {
		return nil
	}
	lease, ok, err := r.holder(ctx, id)
	if err != nil || !ok {
		return nil
	}
	return r.owned(ctx, lease)
}

// holder reads the live lease another replica holds of handler id; ok
// is false when this replica holds it or nobody does.
func (r *Replica) holder(ctx context.Context, id string) (lease persistence.Lease, ok bool, err error) {
	if _, held := r.Fence(id); held {
		return persistence.Lease{}, false, nil
	}
	lease, err = r.db.Lease(ctx, id)
	if err != nil || !lease.Live || lease.Owner == r.cfg.ID {
		return persistence.Lease{}, false, err
	}
	return lease, true, nil
}

// FillOwners sets the owner of the running handlers of a page that this
// replica does not hold (view sets its own), from one query of the live
// leases. The owner is informative: if it cannot be read, it stays unset.
func (r *Replica) FillOwners(ctx context.Context, hs []*wfdv1.Handler) {
	if r == nil {
		return
	}
	var ids []string
	for _, h := range hs {
		if st := h.GetStatus(); h.GetOwner() == "" && (st == wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING || st == wfdv1.HandlerStatus_HANDLER_STATUS_QUEUED) {
			ids = append(ids, h.GetHandlerId())
		}
	}
	if len(ids) == 0 {
		return
	}
	owners, err := r.db.Owners(ctx, ids)
	if err != nil {
		r.log.Debug("reading the owners of listed handlers", "err", err)
		return
	}
	for _, h := range hs {
		if o, ok := owners[h.GetHandlerId()]; ok && h.GetOwner() == "" {
			h.Owner = o
		}
	}
}
