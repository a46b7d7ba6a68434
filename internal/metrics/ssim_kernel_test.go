package metrics

import (
	"fmt"
	"math"
	"syscall"
	"testing"

	"github.com/diffusion-check/diffusion-check/internal/kernel"
)

// vectorLevels are the vector kernels this build and CPU run (none without GOEXPERIMENT=simd on
// amd64, AVX2 on an AVX2 CPU, AVX2 and AVX512 on an AVX-512 one).
func vectorLevels() []kernel.Level {
	var ls []kernel.Level
	for _, l := range kernel.Supported() {
		if vectorKernel(l) != nil {
			ls = append(ls, l)
		}
	}
	return ls
}

// TestVectorKernelsMatchPortable checks every vector kernel this CPU runs against the portable
// one on many sizes, the odd widths whose rows end inside a vector included, and for AVX-512
// both ways of building its 16-bit words (with AVX512-VBMI where the CPU has it, and without):
// SSE and SAD equal, the sum of the local SSIM per channel within vectorTolerance per window (the
// proven bound of the float32 part, 8.1e-7), and in practice far closer: within 3e-8 per window
// on average.
func TestVectorKernelsMatchPortable(t *testing.T) {
	levels := vectorLevels()
	if len(levels) == 0 {
		t.Skipf("no vector kernel runs here (%s)", kernel.Describe())
	}
	r := rng(7)
	var sv, sp SSIMScratch
	sizes := [][2]int{{7, 7}, {8, 7}, {11, 9}, {13, 7}, {14, 7}, {16, 8}, {21, 7}, {22, 10}, {23, 30}, {63, 12}, {64, 9}, {1280, 20}, {301, 17}}
	for range 60 {
		sizes = append(sizes, [2]int{7 + int(r.next()%120), 7 + int(r.next()%40)})
	}
	for _, l := range levels {
		var worst float64
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
			ws, we2, we1 := sp.frame(&portableKernel, a, b, w, h)
			for _, vbmi := range vbmiCases(l) {
				sv.noVBMI = !vbmi
				name := fmt.Sprintf("%dx%d, %s kernel (VBMI %v)", w, h, l, vbmi)
				gs, ge2, ge1 := sv.frame(vectorKernel(l), a, b, w, h)
				if ge2 != we2 || ge1 != we1 {
					t.Errorf("%s: vector SSE %d SAD %d, portable %d %d", name, ge2, ge1, we2, we1)
				}
				windows := float64((w - 2*ssimPad) * (h - 2*ssimPad))
				for c := range 3 {
					diff := math.Abs(gs[c]-ws[c]) / windows
					worst = max(worst, diff)
					if diff > vectorTolerance || diff > 3e-8 && windows >= 100 {
						t.Errorf("%s channel %d: vector sum %.15g, portable %.15g (%.3g a window)", name, c, gs[c], ws[c], diff)
					}
				}
			}
		}
		t.Logf("%s: largest difference of the mean local SSIM: %.3g (bound %.3g)", l, worst, vectorTolerance)
	}
}

// TestSelectedIsWidestSupported: the dispatch picks the widest kernel the CPU has (GODEBUG=
// cpu.avx512f=off or cpu.avx2=off narrow it; ./scripts/test runs the suite that way too).
func TestSelectedIsWidestSupported(t *testing.T) {
	s := kernel.Supported()
	if got, want := kernel.Selected(), s[len(s)-1]; got != want {
		t.Errorf("selected %s, widest supported %s (%s)", got, want, kernel.Describe())
	}
	t.Logf("kernels here: %v, selected %s (%s)", s, kernel.Selected(), kernel.Describe())
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

// BenchmarkSSIM720p times the whole per-frame work of the consistency check on one 1280×720 RGB
// pair (SSIM of all three channels, PSNR and mean absolute difference in one pass) with every
// kernel this CPU runs, and reports each against the portable kernel timed in the same
// sub-benchmark (x-portable: how many times faster; cpu-ms/frame: the process's CPU time).
func BenchmarkSSIM720p(b *testing.B) {
	const w, h = 1280, 720
	x := smooth(w, h, 0.5)
	y := noisy(x, 6, 5)
	for _, l := range kernel.Supported() {
		b.Run(l.String(), func(b *testing.B) {
			var s SSIMScratch
			s.metrics(l, x, y, w, h)
			b.SetBytes(int64(2 * len(x)))
			b.ReportAllocs()
			c0 := cpuNanos()
			for b.Loop() {
				s.metrics(l, x, y, w, h)
			}
			perFrame := float64(cpuNanos()-c0) / float64(b.N)
			b.StopTimer()
			// The anchor: the portable kernel on the same pair, in the same run.
			const anchorFrames = 5
			var p SSIMScratch
			p.metrics(kernel.Portable, x, y, w, h)
			p0 := cpuNanos()
			for range anchorFrames {
				p.metrics(kernel.Portable, x, y, w, h)
			}
			portable := float64(cpuNanos()-p0) / anchorFrames
			b.ReportMetric(perFrame/1e6, "cpu-ms/frame")
			b.ReportMetric(portable/1e6, "portable-cpu-ms/frame")
			if perFrame > 0 {
				b.ReportMetric(portable/perFrame, "x-portable")
			}
		})
	}
}
