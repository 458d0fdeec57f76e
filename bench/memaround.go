package bench

// memAround reads the memory of processes (summed: the replicas) around
// the park phase; nil when it cannot (no pid, not Linux, another host's
// pid).
type memAround struct {
	pids []int
	n    int
	m    *memoryResult
}

func newMemAround(pids []int, n int) *memAround {
	if len(pids) == 0 || pids[0] == 0 {
		return nil
	}
	s, err := rssSum(pids)
	if err != nil {
		return nil
	}
	return &memAround{pids: pids, n: n, m: &memoryResult{BeforePark: s}}
}

// rssSum is the memory of pids, summed.
func rssSum(pids []int) (memSample, error) {
	var sum memSample
	for _, pid := range pids {
		s, err := rss(pid)
		if err != nil {
			return memSample{}, err
		}
		sum.RSS, sum.Anon, sum.File = sum.RSS+s.RSS, sum.Anon+s.Anon, sum.File+s.File
	}
	return sum, nil
}

func (r *memAround) parked() *memoryResult {
	if r == nil {
		return nil
	}
	m := r.m
	m.AfterPark, _ = rssSum(r.pids)
	m.PerParkedHandler = (m.AfterPark.RSS - m.BeforePark.RSS) / int64(r.n)
	m.AnonPerParkedHandler = (m.AfterPark.Anon - m.BeforePark.Anon) / int64(r.n)
	return m
}

func (r *memAround) resumed() {
	if r != nil {
		r.m.AfterResume, _ = rssSum(r.pids)
	}
}
