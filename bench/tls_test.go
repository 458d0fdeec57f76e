package bench_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestBenchTLS runs the phases in plaintext and again over TLS with a
// token, with each client library, and reports both and the comparison.
func TestBenchTLS(t *testing.T) {
	bin := buildWfd(t)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"grpc-go", nil},
		{"connect-go", []string{"--client", "connect-go", "--protocol", "connect"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"-n", "20", "-c", "4", "--echo", "10", "--warmup", "2", "--tls", "--json", "--wfd", bin}, tc.args...)
			code, out, errs := runMain(t, args...)
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
			}
			var res struct {
				Park *phase `json:"park"`
				TLS  *struct {
					Server string `json:"server"`
					Echo   *phase `json:"echo"`
					Park   *phase `json:"park"`
					Resume *phase `json:"resume"`
				} `json:"tls"`
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("%v in %s", err, out)
			}
			if res.Park == nil || res.Park.Count != 20 {
				t.Fatalf("plaintext park phase %+v", res.Park)
			}
			m := res.TLS
			if m == nil || !strings.Contains(m.Server, "--tls-cert") {
				t.Fatalf("no TLS run on a TLS server in %s", out)
			}
			for name, p := range map[string]*phase{"echo": m.Echo, "park": m.Park, "resume": m.Resume} {
				if p == nil || p.PerSecond <= 0 || p.Latency.P50 <= 0 {
					t.Errorf("TLS %s: %+v", name, p)
				}
			}
		})
	}
	code, out, errs := runMain(t, "-n", "10", "-c", "2", "--echo", "0", "--warmup", "0", "--tls", "--wfd", bin)
	if code != 0 || !strings.Contains(out, "over TLS with a bearer token") || !strings.Contains(out, "parks per second over TLS:") {
		t.Fatalf("table: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
}
