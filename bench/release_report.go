package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// releaseResult is what --mode release measured.
type releaseResult struct {
	// Park: n approval handlers parked by -c clients; IdleInMemory is the
	// server's handlers_idle_in_memory after it.
	Park         *phaseResult `json:"park"`
	IdleInMemory int64        `json:"idle_in_memory_after_park"`
	// Release: ReleaseHandler for each, from -c clients (latency = the
	// call, which returns once the release is durable). Then the server's
	// handlers_released and handlers_active.
	Release              *phaseResult `json:"release"`
	ReleasedAfterRelease int64        `json:"released_after_release"`
	InMemoryAfterRelease int64        `json:"in_memory_after_release"`

	SettleSeconds float64        `json:"settle_seconds"`
	Memory        releaseMemory  `json:"memory"`
	Disk          *diskResult    `json:"disk,omitempty"`
	Startup       *startupResult `json:"startup,omitempty"`
	// RehydrateN handlers are answered in each run: first at 1 client,
	// then (other handlers) at -c clients.
	RehydrateN   int                `json:"rehydrate_n"`
	Rehydrate    []*rehydrateResult `json:"rehydrate"`
	HeapProfiles []string           `json:"heap_profiles,omitempty"`
	Targets      []target           `json:"targets"`
}

// releaseMemory: the server's memory at each point, and the differences
// per handler.
type releaseMemory struct {
	BeforePark   *memReading `json:"before_park"`             // after warm-up, forced GC
	AfterPark    *memReading `json:"after_park"`              // n idle in memory (live heap: forced GC after the RSS reading)
	AfterRelease *memReading `json:"after_release"`           // right after the last release
	AfterSettle  *memReading `json:"after_settle"`            // --settle later
	AfterGC      *memReading `json:"after_gc_settle"`         // forced GC, then --settle (with --server-gc)
	AfterRestart *memReading `json:"after_restart,omitempty"` // the restarted server, n released, after warm-up and a forced GC

	PerIdle            *perHandler `json:"per_idle_handler"`               // (after park - before park) / n
	PerReleased        *perHandler `json:"per_released_handler"`           // (after GC + settle, or after settle - before park) / n
	PerReleasedFrom    string      `json:"per_released_handler_from"`      // which reading PerReleased uses
	PerReleasedRestart *perHandler `json:"per_released_handler_restarted"` // (after restart - before park) / n
}

// memReading is /proc/<pid>/status, plus the Go live heap (HeapAlloc right
// after a forced GC) when one was taken.
type memReading struct {
	memSample
	HeapLive int64 `json:"heap_live_bytes,omitempty"`
	// Trace: readings once a second during the wait before this one.
	Trace []memSample `json:"trace_each_second,omitempty"`
}

type perHandler struct {
	RSS      int64  `json:"vm_rss_bytes"`
	Anon     int64  `json:"rss_anon_bytes"`
	HeapLive *int64 `json:"heap_live_bytes,omitempty"`
}

// diskResult is the stopped server's bbolt file with n released handlers.
type diskResult struct {
	Path             string       `json:"path"`
	FileBytes        int64        `json:"file_bytes"`               // after the server stopped
	FileBytesRunning int64        `json:"file_bytes_after_release"` // right after the releases, server running
	PerReleased      int64        `json:"file_bytes_per_released_handler"`
	PageSize         int          `json:"page_size"`
	HighWaterBytes   int64        `json:"high_water_bytes"` // pages bbolt has handed out
	FreeBytes        int64        `json:"free_bytes"`       // of those, on the freelist
	Buckets          []bucketDisk `json:"buckets"`
}

type bucketDisk struct {
	Name       string `json:"name"`
	Keys       int    `json:"keys"`
	AllocBytes int64  `json:"alloc_bytes"` // its pages
	InuseBytes int64  `json:"inuse_bytes"` // what its keys and values fill of them
}

// startupResult: the restart with n released handlers in the store.
type startupResult struct {
	StopSeconds    float64 `json:"sigterm_to_exit_seconds"`
	ServingSeconds float64 `json:"start_to_serving_seconds"`
	ListSeconds    float64 `json:"start_to_list_workflows_seconds"`
	Released       int64   `json:"handlers_released"` // GetStats, once it answers
	InMemory       int64   `json:"handlers_in_memory"`
}

// rehydrateResult is one rehydrate run: the phase, seen by the clients,
// and the server's own view: its rehydrate latency over its last
// ServerWindow loads, and whether it loaded each handler exactly once.
type rehydrateResult struct {
	Clients int `json:"clients"`
	*phaseResult
	ServerP50    float64 `json:"server_rehydrate_p50_ms"`
	ServerP99    float64 `json:"server_rehydrate_p99_ms"`
	ServerWindow int     `json:"server_rehydrate_window"`
	LoadedOnce   bool    `json:"each_loaded_once"`
}

type target struct {
	Name    string  `json:"name"`
	Measure string  `json:"measure"`
	Value   float64 `json:"value"`
	Limit   float64 `json:"limit"`
	Unit    string  `json:"unit"`
	Pass    bool    `json:"pass"`
	Note    string  `json:"note,omitempty"`
}

func writeReleaseTable(w io.Writer, res *Result) {
	c, rel := res.Config, res.Release
	fmt.Fprintf(w, "wfd bench --mode release: n=%d c=%d rehydrate=%d conns=%d client=%s protocol=%s gzip=%v fsync=%s\n",
		c.N, c.C, rel.RehydrateN, c.Conns, c.Client, c.Protocol, c.Gzip, c.Fsync)
	fmt.Fprintf(w, "server: %s (pid %d)\n", c.Server, c.ServerPID)
	if c.Restarted != "" {
		fmt.Fprintf(w, "restarted: %s (pid %d)\n", c.Restarted, c.RestartedPID)
	}
	fmt.Fprintln(w)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, phaseHeader)
	phaseRow(tw, "park", "RunWorkflow → IdleChanged{idle}", "RunWorkflow acknowledged", rel.Park)
	phaseRow(tw, "release", "ReleaseHandler acknowledged", "", rel.Release)
	for _, rr := range rel.Rehydrate {
		phaseRow(tw, fmt.Sprintf("rehydrate c=%d", rr.Clients), "SendEvent → HandlerFinished", "SendEvent acknowledged", rr.phaseResult)
	}
	_ = tw.Flush()
	if p := rel.Park; p != nil && p.DoneInResponse > 0 {
		fmt.Fprintf(w, "(park: %d of %d RunWorkflow responses already showed the handler idle)\n", p.DoneInResponse, p.Count)
	}
	for _, rr := range rel.Rehydrate {
		if rr.DoneInResponse > 0 {
			fmt.Fprintf(w, "(rehydrate c=%d: %d of %d SendEvent responses already said completed)\n", rr.Clients, rr.DoneInResponse, rr.Count)
		}
	}
	serverLine(w, "park", 14, rel.Park)
	serverLine(w, "release", 14, rel.Release)
	for _, rr := range rel.Rehydrate {
		serverLine(w, fmt.Sprintf("rehydrate c=%d", rr.Clients), 14, rr.phaseResult)
	}
	if rel.Release != nil {
		fmt.Fprintf(w, "after park: %d idle in memory; after release: %d released, %d in memory\n",
			rel.IdleInMemory, rel.ReleasedAfterRelease, rel.InMemoryAfterRelease)
	}
	for _, rr := range rel.Rehydrate {
		once := "each handler loaded exactly once"
		if !rr.LoadedOnce {
			once = "NOT one load per handler"
		}
		var loads int64
		if rr.Server != nil {
			loads = rr.Server.Rehydrations
		}
		fmt.Fprintf(w, "rehydrate c=%d: %d rehydrations for %d handlers (%s); server's rehydrate latency (load, decode, restore; its last %d) p50 %.3f ms, p99 %.3f ms\n",
			rr.Clients, loads, rr.Count, once, rr.ServerWindow, rr.ServerP50, rr.ServerP99)
	}
	fmt.Fprintln(w)

	writeReleaseMemory(w, rel)
	writeDisk(w, rel.Disk, c.N)
	if s := rel.Startup; s != nil {
		fmt.Fprintf(w, "start-up with %d released handlers in the store (then %d in memory, %d released)\n", c.N, s.InMemory, s.Released)
		fmt.Fprintf(w, "  SIGTERM → exited                        %8.3f s\n", s.StopSeconds)
		fmt.Fprintf(w, "  process start → health check SERVING    %8.3f s\n", s.ServingSeconds)
		fmt.Fprintf(w, "  process start → first ListWorkflows     %8.3f s\n", s.ListSeconds)
		fmt.Fprintln(w)
	}
	if len(rel.HeapProfiles) > 0 {
		fmt.Fprintf(w, "server heap profiles: %v\n\n", rel.HeapProfiles)
	}
	if len(rel.Targets) > 0 {
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprint(tw, "target\tmeasured as\tvalue\ttarget\tresult\n")
		for _, t := range rel.Targets {
			result := "pass"
			if !t.Pass {
				result = "MISS"
			}
			if t.Note != "" {
				result += " (" + t.Note + ")"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t< %s\t%s\n", t.Name, t.Measure, unit(t.Value, t.Unit), unit(t.Limit, t.Unit), result)
		}
		_ = tw.Flush()
	}
}

func writeReleaseMemory(w io.Writer, rel *releaseResult) {
	m := rel.Memory
	settle := time.Duration(rel.SettleSeconds * float64(time.Second)).Round(time.Millisecond).String()
	fmt.Fprintf(w, "server memory                    %22s  %22s  %22s  %22s\n", "VmRSS", "RssAnon", "RssFile", "Go live heap after GC")
	for _, r := range []struct {
		name string
		m    *memReading
	}{
		{"before park", m.BeforePark},
		{fmt.Sprintf("after park (%d idle)", rel.IdleInMemory), m.AfterPark},
		{"after release", m.AfterRelease},
		{"after release + " + settle, m.AfterSettle},
		{"after GC + " + settle, m.AfterGC},
		{"after restart", m.AfterRestart},
	} {
		if r.m == nil {
			continue
		}
		heap := "-"
		if r.m.HeapLive > 0 {
			heap = mib(r.m.HeapLive)
		}
		fmt.Fprintf(w, "  %-29s  %22s  %22s  %22s  %22s\n", r.name, mib(r.m.RSS), mib(r.m.Anon), mib(r.m.File), heap)
	}
	for _, r := range []struct {
		name string
		m    *memReading
	}{{"after release", m.AfterSettle}, {"after GC", m.AfterGC}} {
		if r.m == nil || len(r.m.Trace) == 0 {
			continue
		}
		all := append(r.m.Trace, r.m.memSample)
		fmt.Fprintf(w, "  %s, each second: RssAnon %s MiB; RssFile %s MiB\n", r.name,
			runs(all, func(s memSample) int64 { return s.Anon }), runs(all, func(s memSample) int64 { return s.File }))
	}
	per := func(what string, p *perHandler, how string) {
		if p == nil {
			return
		}
		heap := ""
		if p.HeapLive != nil {
			heap = fmt.Sprintf(", %d live heap", *p.HeapLive)
		}
		fmt.Fprintf(w, "%-28s %d bytes VmRSS, %d RssAnon%s  (%s) / n\n", what, p.RSS, p.Anon, heap, how)
	}
	per("per idle handler in memory:", m.PerIdle, "after park - before park")
	per("per released handler:", m.PerReleased, m.PerReleasedFrom+" - before park")
	per("  restarted server:", m.PerReleasedRestart, "after restart - before park")
	fmt.Fprintln(w)
}

func writeDisk(w io.Writer, d *diskResult, n int) {
	if d == nil || d.FileBytes == 0 {
		return
	}
	fmt.Fprintf(w, "store: %s = %d bytes per released handler (n=%d); while running after the releases: %s\n",
		mib(d.FileBytes), d.PerReleased, n, mib(d.FileBytesRunning))
	fmt.Fprintf(w, "  bbolt: %d-byte pages, high-water mark %s, of which free %s\n", d.PageSize, mib(d.HighWaterBytes), mib(d.FreeBytes))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "  bucket\tkeys\tpages bytes\tin use bytes\tpages per handler\tin use per handler\t\n")
	var keys int
	var alloc, inuse int64
	for _, b := range d.Buckets {
		fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%d\t%d\t\n", b.Name, b.Keys, b.AllocBytes, b.InuseBytes, b.AllocBytes/int64(n), b.InuseBytes/int64(n))
		keys += b.Keys
		alloc += b.AllocBytes
		inuse += b.InuseBytes
	}
	fmt.Fprintf(tw, "  all\t%d\t%d\t%d\t%d\t%d\t\n", keys, alloc, inuse, alloc/int64(n), inuse/int64(n))
	_ = tw.Flush()
	fmt.Fprintln(w)
}

func unit(v float64, u string) string {
	switch u {
	case "B":
		return fmt.Sprintf("%.0f B", v)
	case "ms":
		return fmt.Sprintf("%.3f ms", v)
	case "s":
		return fmt.Sprintf("%.3f s", v)
	}
	return fmt.Sprintf("%g %s", v, u)
}

// runs lists f of each sample in MiB, with repeats of a value folded into
// "value ×count".
func runs(ss []memSample, f func(memSample) int64) string {
	var b strings.Builder
	for i := 0; i < len(ss); {
		v, j := f(ss[i]), i+1
		for j < len(ss) && f(ss[j]) == v {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%.1f", float64(v)/(1<<20))
		if j-i > 1 {
			fmt.Fprintf(&b, " ×%d", j-i)
		}
		i = j
	}
	return b.String()
}
