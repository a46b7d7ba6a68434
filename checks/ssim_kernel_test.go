package checks

import (
	"math"
	"syscall"
	"testing"
)

// TestVectorKernelMatchesPortable checks the vector kernel (present when built with
// GOEXPERIMENT=simd on an AVX-512 CPU) against the portable one on many sizes, the odd widths
// whose rows end inside a vector included, and both ways of building its 16-bit words (with
// AVX512-VBMI where the CPU has it, and without): SSE and SAD equal, the sum of the local SSIM per
// channel within vectorTolerance per window (the proven bound of its float32 part, 8.1e-7),
// and in practice far closer: within 2e-8 per window on average.
func TestVectorKernelMatchesPortable(t *testing.T) {
	if vectorRun == nil {
		t.Skip("no vector kernel in this build (GOEXPERIMENT=simd on an AVX-512 CPU has one)")
	}
	r := rng(7)
	var sv, sp SSIMScratch
	var worst float64
	defer setVBMI(true)
	sizes := [][2]int{{7, 7}, {8, 7}, {11, 9}, {16, 8}, {21, 7}, {22, 10}, {23, 30}, {63, 12}, {64, 9}, {1280, 20}, {301, 17}}
	for range 40 {
		sizes = append(sizes, [2]int{7 + int(r.next()%120), 7 + int(r.next()%40)})
	}
	for i, wh := range sizes {
		w, h := wh[0], wh[1]
		var a, b []byte
		switch i % 3 {
		case 0:
			a, b = noisy(flat(w, h, 128), 127, r.next()), noisy(flat(w, h, 128), 127, r.next())
		case 1:
			a = smooth(w, h, float64(i)/7)
			b = noisy(a, 1+int(r.next()%40), r.next())
		case 2:
			a, b = noisy(flat(w, h, 250), 10, r.next()), noisy(flat(w, h, 5), 10, r.next())
		}
		ws, we2, we1 := sp.run(a, b, w, h, nil)
		for _, vbmi := range vbmiCases() {
			setVBMI(vbmi)
			gs, ge2, ge1 := vectorRun(&sv, a, b, w, h)
			if ge2 != we2 || ge1 != we1 {
				t.Errorf("%dx%d (VBMI %v): vector SSE %d SAD %d, portable %d %d", w, h, vbmi, ge2, ge1, we2, we1)
			}
			windows := float64((w - 2*ssimPad) * (h - 2*ssimPad))
			for c := range 3 {
				diff := math.Abs(gs[c]-ws[c]) / windows
				worst = max(worst, diff)
				if diff > vectorTolerance || diff > 2e-8 && windows >= 100 {
					t.Errorf("%dx%d (VBMI %v) channel %d: vector sum %.15g, portable %.15g (%.3g a window)", w, h, vbmi, c, gs[c], ws[c], diff)
				}
			}
		}
	}
	t.Logf("largest difference of the mean local SSIM: %.3g (bound %.3g)", worst, vectorTolerance)
}

// cpuNanos is the process's user+system CPU time: the benchmarks report it per frame beside
// the wall time, which on a loaded machine says more about the neighbours than the kernel.
func cpuNanos() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func benchMetrics(b *testing.B, portable bool) {
	const w, h = 1280, 720
	x := smooth(w, h, 0.5)
	y := noisy(x, 6, 5)
	var s SSIMScratch
	if portable {
		saved := vectorRun
		vectorRun = nil
		defer func() { vectorRun = saved }()
	}
	s.Metrics(x, y, w, h)
	b.SetBytes(int64(2 * len(x)))
	b.ReportAllocs()
	c0 := cpuNanos()
	for b.Loop() {
		s.Metrics(x, y, w, h)
	}
	b.ReportMetric(float64(cpuNanos()-c0)/float64(b.N), "cpu-ns/op")
}

// BenchmarkSSIM720pPortable is BenchmarkSSIM720p on the portable kernel, whatever the build.
func BenchmarkSSIM720pPortable(b *testing.B) { benchMetrics(b, true) }
