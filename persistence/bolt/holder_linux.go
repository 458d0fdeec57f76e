package bolt

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// maxCommand is how much of a holder's command line InUseError keeps.
const maxCommand = 120

// lockHolder returns the process that holds a flock(2) lock on path, from
// /proc/locks (which the kernel keeps, so it is never stale), and its
// command line; 0 if none is listed or visible. A process in another PID
// namespace is listed with pid 0 or not at all.
func lockHolder(path string) (pid int, command string) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0, ""
	}
	data, err := os.ReadFile("/proc/locks")
	if err != nil {
		return 0, ""
	}
	dev := fmt.Sprintf("%02x:%02x:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)), st.Ino)
	ino := ":" + strconv.FormatUint(st.Ino, 10)
	// Match the device too where it agrees (on overlay file systems
	// stat's device may be the overlay's, the lock's the lower one's).
	var exact, inode string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		// "1: FLOCK  ADVISORY  WRITE 4242 fe:00:9978402 0 EOF"; a waiter
		// has "->" after the number.
		f := strings.Fields(sc.Text())
		if len(f) > 2 && f[1] == "->" {
			continue
		}
		if len(f) < 6 || f[1] != "FLOCK" {
			continue
		}
		switch {
		case f[5] == dev && exact == "":
			exact = f[4]
		case strings.HasSuffix(f[5], ino) && inode == "":
			inode = f[4]
		}
	}
	pid, err = strconv.Atoi(cmp.Or(exact, inode))
	if err != nil || pid <= 0 {
		return 0, ""
	}
	return pid, processCommand(pid)
}

// processCommand is pid's command line, shortened, or "" if unreadable.
func processCommand(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return ""
	}
	s := strings.TrimSpace(strings.ReplaceAll(string(bytes.TrimRight(b, "\x00")), "\x00", " "))
	if len(s) > maxCommand {
		s = s[:maxCommand] + "…"
	}
	return s
}
