package compare

import (
	"errors"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/diffusion-check/diffusion-check/internal/kernel"
	"github.com/diffusion-check/diffusion-check/internal/media"
)

// sample is the wall and CPU time of one timed call.
type sample struct{ wall, cpu time.Duration }

// timed runs f and returns its wall time and the CPU time (user+sys) this process and the
// children that ended meanwhile (ffmpeg, ffprobe) spent.
func timed(b *testing.B, f func() error) sample {
	b.Helper()
	s0, c0 := cpuNanos()
	t0 := time.Now()
	if err := f(); err != nil {
		b.Fatal(err)
	}
	wall := time.Since(t0)
	s1, c1 := cpuNanos()
	return sample{wall, time.Duration(s1 - s0 + c1 - c0)}
}

// median returns the medians of the wall and CPU times of ss.
func median(ss []sample) (wall, cpu float64) {
	pick := func(f func(sample) time.Duration) float64 {
		v := make([]float64, len(ss))
		for i, s := range ss {
			v[i] = float64(f(s))
		}
		slices.Sort(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return pick(func(s sample) time.Duration { return s.wall }), pick(func(s sample) time.Duration { return s.cpu })
}

// BenchmarkCompareVsFFmpeg measures `compare` against its anchor, in one run:
// each iteration times, one after the other, `ffmpeg -i O1 -i GT -lavfi ssim -f null -` (the
// anchor), the comparison of one pair as `diffusion-check compare GT O1` makes it (pictures:
// every frame's RGB SSIM, PSNR and MAD, decode included; then the audio, which the ground
// truth's probe says there is none of) and that of three outputs as `compare GT O1 O2 O3`
// makes it (the ground truth decoded once, the three videos in one pass). The videos are
// bench/compare.sh's (97 frames 1280×720 H.264). It reports the medians and their ratios:
// one-wall-x and one-cpu-x (goal ≤ 1.3), three-wall-x-per-output and three-cpu-x-per-output
// (goal ≤ 0.8), with every vector SSIM kernel this CPU has (sub-benchmarks avx2, avx512).
// Run pinned to two cores, e.g. `taskset -c 0,1 go test ./internal/compare -run '^$' -bench
// CompareVsFFmpeg -benchtime 5x -cpu 2`, and with -cpuprofile for where the time goes.
func BenchmarkCompareVsFFmpeg(b *testing.B) {
	gt, outs := benchVideos(b, 3)
	prev := kernel.Selected()
	b.Cleanup(func() { _ = kernel.Force(prev) })
	for _, l := range kernel.Supported() {
		if l == kernel.Portable {
			continue
		}
		b.Run(l.String(), func(b *testing.B) {
			if err := kernel.Force(l); err != nil {
				b.Fatal(err)
			}
			var anchor, one, three []sample
			for b.Loop() {
				anchor = append(anchor, timed(b, func() error {
					out, err := exec.CommandContext(b.Context(), "ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error",
						"-i", outs[0], "-i", gt, "-lavfi", "ssim", "-f", "null", "-").CombinedOutput()
					if err != nil {
						return errors.New(string(out))
					}
					return nil
				}))
				one = append(one, timed(b, func() error {
					c := NewCache(0, Helpers{}) // what compare does with one output
					if _, err := c.Files(b.Context(), gt, outs[0]); err != nil {
						return err
					}
					if _, err := c.Audio(b.Context(), gt, outs[0]); !errors.Is(err, media.ErrNoAudio) {
						return err
					}
					return nil
				}))
				three = append(three, timed(b, func() error {
					c := NewCache(DefaultCacheBytes, Helpers{})
					_, errs := c.FilesEach(b.Context(), gt, outs)
					if err := errors.Join(errs...); err != nil {
						return err
					}
					for _, out := range outs {
						if _, err := c.Audio(b.Context(), gt, out); !errors.Is(err, media.ErrNoAudio) {
							return err
						}
					}
					return nil
				}))
			}
			aw, ac := median(anchor)
			ow, oc := median(one)
			tw, tc := median(three)
			per := float64(len(outs))
			b.ReportMetric(aw/1e6, "ffmpeg-wall-ms")
			b.ReportMetric(ac/1e6, "ffmpeg-cpu-ms")
			b.ReportMetric(ow/1e6, "one-wall-ms")
			b.ReportMetric(oc/1e6, "one-cpu-ms")
			b.ReportMetric(tw/1e6, "three-wall-ms")
			b.ReportMetric(tc/1e6, "three-cpu-ms")
			b.ReportMetric(ow/aw, "one-wall-x")
			b.ReportMetric(oc/ac, "one-cpu-x")
			b.ReportMetric(tw/per/aw, "three-wall-x-per-output")
			b.ReportMetric(tc/per/ac, "three-cpu-x-per-output")
		})
	}
}
