package bench

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// childAttrs kills the server if the benchmark dies first, so a crashed or
// killed benchmark leaves no server behind.
func childAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// rss returns the resident memory of pid in bytes: VmRSS, and of it
// RssAnon (heap, stacks: the process's own memory) and RssFile (mapped
// files: for wfd mostly the bbolt file, which bbolt mmaps).
func rss(pid int) (memSample, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memSample{}, err
	}
	var m memSample
	for line := range bytes.Lines(b) {
		var dst *int64
		switch {
		case bytes.HasPrefix(line, []byte("VmRSS:")):
			dst = &m.RSS
		case bytes.HasPrefix(line, []byte("RssAnon:")):
			dst = &m.Anon
		case bytes.HasPrefix(line, []byte("RssFile:")):
			dst = &m.File
		default:
			continue
		}
		f := bytes.Fields(line) // "VmRSS:", "12345", "kB"
		if len(f) != 3 || string(f[2]) != "kB" {
			return memSample{}, fmt.Errorf("cannot parse %q in /proc/%d/status", line, pid)
		}
		kb, err := strconv.ParseInt(string(f[1]), 10, 64)
		if err != nil {
			return memSample{}, fmt.Errorf("cannot parse %q in /proc/%d/status", line, pid)
		}
		*dst = kb << 10
	}
	if m.RSS == 0 {
		return memSample{}, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
	}
	return m, nil
}

// userHZ is the unit of the times in /proc/<pid>/stat (USER_HZ, 100 on
// every Linux architecture Go supports).
const userHZ = 100

// cpuTime returns the user+system CPU time pid has used.
func cpuTime(pid int) (time.Duration, error) {
	st, err := procStat(pid)
	if err != nil {
		return 0, err
	}
	return time.Duration(st.utime+st.stime) * time.Second / userHZ, nil
}

// stat is what cpuTime and pgProcs read of /proc/<pid>/stat: the command name, the
// parent, and the CPU times of the process and of its waited-for
// children, in USER_HZ ticks.
type stat struct {
	comm                         string
	ppid                         int
	utime, stime, cutime, cstime int64
}

func procStat(pid int) (stat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return stat{}, err
	}
	// "pid (comm) state ppid ...": comm may hold spaces and parentheses,
	// so it ends at the last ')'. utime, stime, cutime and cstime are
	// fields 14 to 17.
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return stat{}, errors.New("cannot parse " + string(b))
	}
	f := bytes.Fields(b[end+1:])
	if len(f) < 15 {
		return stat{}, fmt.Errorf("cannot parse /proc/%d/stat", pid)
	}
	s := stat{comm: string(b[open+1 : end])}
	var errs [5]error
	s.ppid, errs[0] = strconv.Atoi(string(f[1]))
	s.utime, errs[1] = strconv.ParseInt(string(f[11]), 10, 64)
	s.stime, errs[2] = strconv.ParseInt(string(f[12]), 10, 64)
	s.cutime, errs[3] = strconv.ParseInt(string(f[13]), 10, 64)
	s.cstime, errs[4] = strconv.ParseInt(string(f[14]), 10, 64)
	if err := errors.Join(errs[:]...); err != nil {
		return stat{}, fmt.Errorf("cannot parse /proc/%d/stat: %w", pid, err)
	}
	return s, nil
}

// selfCPU returns the CPU time this process has used.
func selfCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// machineCPU returns the CPU time the whole machine has accounted since
// boot, and of it the time stolen by the hypervisor (time this VM's
// virtual CPUs were ready to run while the host ran something else), in
// USER_HZ ticks, from the first line of /proc/stat.
func machineCPU() (steal, total uint64, err error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := bytes.Fields(line) // cpu user nice system idle iowait irq softirq steal guest guest_nice
	if len(f) < 9 || string(f[0]) != "cpu" {
		return 0, 0, fmt.Errorf("cannot parse %q in /proc/stat", line)
	}
	// guest and guest_nice are already counted in user and nice.
	for i := 1; i <= 8; i++ {
		v, err := strconv.ParseUint(string(f[i]), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("cannot parse %q in /proc/stat", line)
		}
		total += v
		if i == 8 {
			steal = v
		}
	}
	return steal, total, nil
}
