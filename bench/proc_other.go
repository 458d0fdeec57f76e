//go:build !linux

package bench

import (
	"context"
	"errors"
	"syscall"
	"time"
)

var errNoProc = errors.New("process statistics need Linux /proc")

func childAttrs() *syscall.SysProcAttr { return nil }

func rss(int) (memSample, error) { return memSample{}, errNoProc }

func cpuTime(int) (time.Duration, error) { return 0, errNoProc }

func selfCPU() (time.Duration, error) { return 0, errNoProc }

func machineCPU() (uint64, uint64, error) { return 0, 0, errNoProc }

// pgProcs would measure a PostgreSQL server's CPU time (pgcpu_linux.go).
type pgProcs struct{}

func findPostgres(context.Context, string) (*pgProcs, error) { return nil, errNoProc }

func (*pgProcs) cpu() (time.Duration, error) { return 0, errNoProc }
