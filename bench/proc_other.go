//go:build !linux

package bench

import (
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
