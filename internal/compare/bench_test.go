package compare

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/diffusion-check/diffusion-check/internal/kernel"
	"github.com/diffusion-check/diffusion-check/internal/media"
	"github.com/diffusion-check/diffusion-check/internal/metrics"
)

// sample is the wall and CPU time of one timed call, and the part of that CPU time spent in
// this process (the metric, the conversions, the pipe reads) rather than in its ffmpeg and
// ffprobe children.
type sample struct{ wall, cpu, self time.Duration }

// timed runs f and returns its wall time and the CPU time (user+sys) this process and the
// children that ended meanwhile (ffmpeg, ffprobe) spent, with this process's part.
func timed(b *testing.B, f func() error) sample {
	b.Helper()
	s0, c0 := cpuNanos()
	t0 := time.Now()
	if err := f(); err != nil {
		b.Fatal(err)
	}
	wall := time.Since(t0)
	s1, c1 := cpuNanos()
	return sample{wall, time.Duration(s1 - s0 + c1 - c0), time.Duration(s1 - s0)}
}

// median returns the medians of the wall, CPU and own CPU times of ss.
func median(ss []sample) (wall, cpu, self float64) {
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
	return pick(func(s sample) time.Duration { return s.wall }), pick(func(s sample) time.Duration { return s.cpu }),
		pick(func(s sample) time.Duration { return s.self })
}

// BenchmarkCompareVsFFmpeg measures `compare` against its anchor, in one run:
// each iteration times, one after the other, `ffmpeg -i O1 -i GT -lavfi ssim -f null -` (the
// anchor), the comparison of one pair as `diffusion-check compare GT O1` makes it (pictures:
// every frame's RGB SSIM, PSNR and MAD, decode included; then the audio, which the ground
// truth's probe says there is none of) and that of three outputs as `compare GT O1 O2 O3`
// makes it (the ground truth decoded once, the three videos in one pass). The videos are
// bench/compare.sh's (97 frames 1280×720 H.264). It reports the medians and their ratios:
// one-wall-x and one-cpu-x (goal ≤ 1.3), three-wall-x-per-output and three-cpu-x-per-output
// (goal ≤ 0.8), with every vector SSIM kernel this CPU has (sub-benchmarks avx2, avx512), and
// one-self-cpu-ms and three-self-cpu-ms, the CPU of this process alone (what is not ffmpeg's
// or ffprobe's: the metric, the conversions, the pipe reads, the scheduling). Run pinned to
// two cores, e.g. `taskset -c 0,1 go test ./internal/compare -run '^$' -bench CompareVsFFmpeg
// -benchtime 5x -cpu 2`, and with -cpuprofile for where the time goes.
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
				anchor = append(anchor, timed(b, ffmpegSSIM(b, gt, outs[0])))
				one = append(one, timed(b, compareOne(b, Helpers{}, gt, outs[0])))
				three = append(three, timed(b, compareEach(b, Helpers{}, gt, outs)))
			}
			aw, ac, _ := median(anchor)
			ow, oc, oself := median(one)
			tw, tc, tself := median(three)
			per := float64(len(outs))
			b.ReportMetric(aw/1e6, "ffmpeg-wall-ms")
			b.ReportMetric(ac/1e6, "ffmpeg-cpu-ms")
			b.ReportMetric(ow/1e6, "one-wall-ms")
			b.ReportMetric(oc/1e6, "one-cpu-ms")
			b.ReportMetric(oself/1e6, "one-self-cpu-ms")
			b.ReportMetric(tw/1e6, "three-wall-ms")
			b.ReportMetric(tc/1e6, "three-cpu-ms")
			b.ReportMetric(tself/1e6, "three-self-cpu-ms")
			b.ReportMetric(ow/aw, "one-wall-x")
			b.ReportMetric(oc/ac, "one-cpu-x")
			b.ReportMetric(tw/per/aw, "three-wall-x-per-output")
			b.ReportMetric(tc/per/ac, "three-cpu-x-per-output")
		})
	}
}

// BenchmarkMetricRows measures how a pass's worker compares a ground-truth frame with three
// outputs (the first frames of BenchmarkCompareVsFFmpeg's 720p videos, as they come from the
// decoders): "rows", each frame converted to rgb24 a row at a time into a ring of
// metrics.RowsHeld rows as metrics.EachScratch walks them in step (what pass.run does), against
// the anchor "frames", each converted whole (RawFormat.RGB) and compared with
// SSIMScratch.Metrics (what pass.run did before), timed in turns in one run. It reports the
// CPU time of each per job and rows-cpu-x-frames, their ratio (below 1: rows is cheaper).
func BenchmarkMetricRows(b *testing.B) {
	gt, outs := benchVideos(b, 3)
	type side struct {
		form media.RawFormat
		raw  []byte
	}
	var sides []side
	for _, path := range append([]string{gt}, outs...) {
		r, err := media.OnPath().OpenFramesWith(b.Context(), path, media.DecodeOptions{Whole: true})
		if err != nil {
			b.Fatal(err)
		}
		raw := make([]byte, r.Format().Size())
		err = r.NextRaw(raw)
		r.Close()
		if err != nil {
			b.Fatal(err)
		}
		sides = append(sides, side{r.Format(), raw})
	}
	const w, h = 1280, 720
	var s metrics.SSIMScratch
	gtRGB, outRGB := make([]byte, 3*w*h), make([]byte, 3*w*h)
	frames := func() {
		g := sides[0].form.RGB(gtRGB, sides[0].raw)
		for _, o := range sides[1:] {
			s.Metrics(o.form.RGB(outRGB, o.raw), g, w, h)
		}
	}
	var e metrics.EachScratch
	rings := make([][]byte, len(sides))
	for k := range rings {
		rings[k] = make([]byte, metrics.RowsHeld*3*w)
	}
	rs := make([]metrics.Rows, len(sides)-1)
	rows := func() {
		for k, o := range sides[1:] {
			rs[k] = o.form.Rows(o.raw, rings[k+1])
		}
		e.Each(rs, sides[0].form.Rows(sides[0].raw, rings[0]), w, h)
	}
	var tf, tr time.Duration
	for b.Loop() {
		tf += timed(b, func() error { frames(); return nil }).cpu
		tr += timed(b, func() error { rows(); return nil }).cpu
	}
	b.ReportMetric(float64(tf)/float64(b.N)/1e6, "frames-cpu-ms")
	b.ReportMetric(float64(tr)/float64(b.N)/1e6, "rows-cpu-ms")
	b.ReportMetric(float64(tr)/float64(tf), "rows-cpu-x-frames")
}

// ffmpegSSIM is the anchor: `ffmpeg -i OUT -i GT -lavfi ssim -f null -`.
func ffmpegSSIM(b *testing.B, gt, out string) func() error {
	return func() error {
		msg, err := exec.CommandContext(b.Context(), "ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error",
			"-i", out, "-i", gt, "-lavfi", "ssim", "-f", "null", "-").CombinedOutput()
		if err != nil {
			return errors.New(string(msg))
		}
		return nil
	}
}

// compareOne is the comparison of one pair as `compare GT OUT` makes it with helpers h: the
// pictures, then the audio, which the ground truth's probe says there is none of.
func compareOne(b *testing.B, h Helpers, gt, out string) func() error {
	return func() error {
		c := NewCache(0, h)
		if _, err := c.Files(b.Context(), gt, out); err != nil {
			return err
		}
		if _, err := c.Audio(b.Context(), gt, out); !errors.Is(err, media.ErrNoAudio) {
			return err
		}
		return nil
	}
}

// compareEach is the comparison of several outputs as `compare GT O1 O2 ...` makes it with
// helpers h: the ground truth decoded once, the videos in one pass, then each one's audio.
func compareEach(b *testing.B, h Helpers, gt string, outs []string) func() error {
	return func() error {
		c := NewCache(DefaultCacheBytes, h)
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
	}
}

// layoutVariants are the layouts BenchmarkCompareLayouts times, each a change of the one a
// pass takes without a thread budget (Helpers.layout).
var layoutVariants = []struct {
	name string
	tune func(*layout)
}{
	{"default", nil},
	{"metric-nice-5", func(l *layout) { l.nice += 5 }},
	{"metric-nice-10", func(l *layout) { l.nice += 10 }},
	{"metric-nice-19", func(l *layout) { l.nice += 19 }},
	{"decode-x1.5", func(l *layout) { l.decode = max(1, l.decode*3/2) }},
	{"decode-x0.75", func(l *layout) { l.decode = max(1, l.decode*3/4) }},
	{"decode-x2", func(l *layout) { l.decode *= 2 }},
	{"decode-all", func(l *layout) { l.decode = l.workers }}, // every core each, as ffmpeg's own decoders
	{"decode-x1.5-nice-5", func(l *layout) { l.decode = max(1, l.decode*3/2); l.nice += 5 }},
	{"workers-x0.75", func(l *layout) { l.setWorkers(max(1, l.workers*3/4)) }},
	{"workers-x0.5", func(l *layout) { l.setWorkers(max(1, l.workers/2)) }},
	{"frames-x2", func(l *layout) { l.frames *= 2 }},
}

// BenchmarkCompareLayouts measures how the work of `compare GT O1 O2 O3` and of `compare GT O1`
// (the videos of BenchmarkCompareVsFFmpeg) is best laid on the cores: each iteration times the
// anchor, `ffmpeg -i O1 -i GT -lavfi ssim -f null -`, then the three-output comparison and the
// one-pair comparison under every variant of layoutVariants, in an order that turns by one
// each iteration. For each variant it reports the ratios of the median wall and CPU times to
// the anchor's, per output of three (<variant>-wall-x-per-output; the goal on 16 cores is
// ≤ 0.5) and for the pair (<variant>-one-wall-x; ≤ 0.9 on 16 cores), and logs them as a table
// (whole with -v) with the CPU of this process alone beside them ("self ms": all but the
// ffmpeg and ffprobe children's). The variants that change nothing on few cores (decode-x1.5 and
// decode-x0.75 on two: one thread each all the same) show the noise. Run it pinned to the
// cores it is about, e.g. on 16: `taskset -c 0-15 go test ./internal/compare -run '^$' -bench
// CompareLayouts -benchtime 7x -v`, or its compiled test binary (scripts/gpu-check bench).
func BenchmarkCompareLayouts(b *testing.B) {
	gt, outs := benchVideos(b, 3)
	var anchor []sample
	times := make([][]sample, len(layoutVariants))
	ones := make([][]sample, len(layoutVariants))
	turn := 0
	for b.Loop() {
		anchor = append(anchor, timed(b, ffmpegSSIM(b, gt, outs[0])))
		for k := range layoutVariants {
			i := (turn + k) % len(layoutVariants)
			h := Helpers{tune: layoutVariants[i].tune}
			times[i] = append(times[i], timed(b, compareEach(b, h, gt, outs)))
			ones[i] = append(ones[i], timed(b, compareOne(b, h, gt, outs[0])))
		}
		turn++
	}
	aw, ac, _ := median(anchor)
	per := float64(len(outs))
	b.ReportMetric(aw/1e6, "ffmpeg-wall-ms")
	table := fmt.Sprintf("%d cores, ffmpeg ssim median wall %.1f ms, cpu %.1f ms\n", runtime.GOMAXPROCS(0), aw/1e6, ac/1e6) +
		fmt.Sprintf("%-18s %9s %9s %9s %8s %8s | %9s %9s %8s\n", "layout", "wall ms", "cpu ms", "self ms", "wall x", "cpu x",
			"one ms", "one self", "one x")
	for i, v := range layoutVariants {
		w, c, self := median(times[i])
		ow, _, oself := median(ones[i])
		b.ReportMetric(w/per/aw, v.name+"-wall-x-per-output")
		b.ReportMetric(c/per/ac, v.name+"-cpu-x-per-output")
		b.ReportMetric(ow/aw, v.name+"-one-wall-x")
		table += fmt.Sprintf("%-18s %9.1f %9.1f %9.1f %8.3f %8.3f | %9.1f %9.1f %8.3f\n",
			v.name, w/1e6, c/1e6, self/1e6, w/per/aw, c/per/ac, ow/1e6, oself/1e6, ow/aw)
	}
	b.Log("three outputs (x: per output), then one pair:\n" + table)
}
