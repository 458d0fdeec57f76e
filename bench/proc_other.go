//go:build !linux

package bench

import (
	"syscall"
	"time"
)

func childAttrs() *syscall.SysProcAttr { return nil }

func rss(int) (memSample, error) { return memSample{}, errNoProc }

func cpuTime(int) (time.Duration, error) { return 0, errNoProc }

func selfCPU() (time.Duration, error) { return 0, errNoProc }

func machineCPU() (uint64, uint64, error) { return 0, 0, errNoProc }
