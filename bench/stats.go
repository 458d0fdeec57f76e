package bench

import (
	"slices"
	"time"
)

// summary describes recorded durations, in milliseconds.
type summary struct {
	Count int     `json:"count"`
	Mean  float64 `json:"mean_ms"`
	P50   float64 `json:"p50_ms"`
	P90   float64 `json:"p90_ms"`
	P99   float64 `json:"p99_ms"`
	Max   float64 `json:"max_ms"`
}

// summarize sorts d and takes nearest-rank percentiles: pX is the smallest
// recorded value that at least X% of the values do not exceed.
func summarize(d []time.Duration) summary {
	if len(d) == 0 {
		return summary{}
	}
	slices.Sort(d)
	var sum time.Duration
	for _, v := range d {
		sum += v
	}
	return summary{
		Count: len(d),
		Mean:  ms(sum / time.Duration(len(d))),
		P50:   ms(percentile(d, 50)),
		P90:   ms(percentile(d, 90)),
		P99:   ms(percentile(d, 99)),
		Max:   ms(d[len(d)-1]),
	}
}

// percentile of sorted values, nearest rank.
func percentile(sorted []time.Duration, p int) time.Duration {
	rank := (p*len(sorted) + 99) / 100 // ceil(p/100 * n)
	return sorted[max(rank, 1)-1]
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
