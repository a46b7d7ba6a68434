package plan

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/diffusion-check/diffusion-check/suite"
)

// bigSuite is a suite of n image cases, a third of them on a reuse server, the rest each
// paying its own start, with estimates that differ: the shape `plan` is asked to split.
func bigSuite(tb testing.TB, n int) *suite.Suite {
	tb.Helper()
	var b strings.Builder
	b.WriteString("servers:\n  ref: {builtin: {step_ms: 1, load_ms: 10}, start_estimate: 30s}\n  warm: {builtin: {step_ms: 1}, reuse: true, start_estimate: " +
		"60s}\ncases:\n")
	for i := range n {
		srv := "ref"
		if i%3 == 0 {
			srv = "warm"
		}
		fmt.Fprintf(&b, "  - {id: case-%05d, server: %s, modality: image, estimate: %ds, request: {prompt: p%d, size: 64x64}}\n", i, srv, 40+i%97*7, i)
	}
	s, err := suite.Parse(filepath.Join(tb.TempDir(), "suite.yaml"), []byte(b.String()))
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// BenchmarkPlan: the time to read and plan suites of 5,000, 10,000 and
// 20,000 cases into 20 partitions, and the time per case of the largest over the smallest:
// 1 is linear, 4 is quadratic (the trial measured 3.8 s, 14.5 s, 65 s: 4.3).
func BenchmarkPlan(b *testing.B) {
	sizes := benchSizes
	// CPU time (user and system, the GC's included) as well as wall time: on a loaded
	// machine the wall time says more about the other processes.
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			b.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	var per, perCPU [3]time.Duration
	for range b.N {
		for i, n := range sizes {
			start, startCPU := time.Now(), cpu()
			s := bigSuite(b, n)
			p, err := ForSuite(s, "", "", 20)
			if err != nil {
				b.Fatal(err)
			}
			if p.Total != 20 {
				b.Fatalf("%d partitions", p.Total)
			}
			per[i] += time.Since(start)
			perCPU[i] += cpu() - startCPU
		}
	}
	for i, n := range sizes {
		b.ReportMetric(per[i].Seconds()/float64(b.N), fmt.Sprintf("s/%d-cases", n))
		b.ReportMetric(perCPU[i].Seconds()/float64(b.N), fmt.Sprintf("cpu-s/%d-cases", n))
	}
	b.ReportMetric((per[2].Seconds()/20000)/(per[0].Seconds()/5000), "per-case-ratio-20000/5000")
	b.ReportMetric((perCPU[2].Seconds()/20000)/(perCPU[0].Seconds()/5000), "cpu-per-case-ratio-20000/5000")
}

// benchSizes are BenchmarkPlan's suite sizes.
var benchSizes = []int{5000, 10000, 20000}
