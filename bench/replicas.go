package bench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// --replicas N: the started server is N `wfd serve` processes in replica
// mode on the one --store database, each with its own --replica-id, port
// (which it advertises) and data directory. The runner spreads its
// workers over them round-robin (runner.api), so a handler parked through
// one replica is mostly resumed through another, which forwards the
// SendEvent to the handler's owner; with --route owner each resume goes to
// the owner itself (runner.apiOn). CPU, memory and the server counters
// are summed over the replicas.

// replicaID is the --replica-id of the i-th replica (from 0).
func replicaID(i int) string { return fmt.Sprintf("r%d", i+1) }

// The values of --route.
const (
	routeSpread = "spread"
	routeOwner  = "owner"
)

// replicaNamed is the index of the replica of id (replicaID), or -1.
func replicaNamed(id string, replicas int) int {
	for i := range replicas {
		if replicaID(i) == id {
			return i
		}
	}
	return -1
}

// startServers starts the server: one child, or cfg.Replicas replicas.
// On an error it stops what it started.
func startServers(cfg config, extra []string) ([]*child, error) {
	if cfg.Replicas == 0 {
		c, err := startChild(cfg, false, extra...)
		if err != nil {
			return nil, err
		}
		return []*child{c}, nil
	}
	var cs []*child
	for i := range cfg.Replicas {
		rcfg := cfg
		if cfg.Data != "" {
			// Each replica its own directory: they share only the database.
			rcfg.Data = filepath.Join(cfg.Data, replicaID(i))
			if err := os.MkdirAll(rcfg.Data, 0o700); err != nil {
				return nil, errors.Join(err, stopServers(cs, cfg.Grace))
			}
		}
		c, err := startChild(rcfg, false, slices.Concat(extra, []string{"--replica-id", replicaID(i)})...)
		if err != nil {
			return nil, errors.Join(err, stopServers(cs, cfg.Grace))
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// stopServers stops the children, the last started first.
func stopServers(cs []*child, grace time.Duration) error {
	var errs []error
	for i := len(cs) - 1; i >= 0; i-- {
		if err := cs[i].stop(grace); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", serverName(cs, i), err))
		}
	}
	return errors.Join(errs...)
}

func serverName(cs []*child, i int) string {
	if len(cs) == 1 {
		return "server"
	}
	return "replica " + replicaID(i)
}
