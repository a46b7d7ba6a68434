package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/diffusion-check/diffusion-check/internal/compare"
)

// compareCmd measures outputs against their ground truth and, when thresholds are given,
// judges them: exit 0 when every output was compared (and is within the thresholds), 1 when
// one is below a threshold or its shape differs from the ground truth's (size, frame count,
// image vs video), 2 on usage errors, 3 when a file could not be decoded. Several outputs are
// compared with one ground truth decoded once: the videos all in one pass, the rest one after
// the other (the ground truth kept within --gt-memory-mib); a failed output does not stop the
// others.
func compareCmd(ctx context.Context, e env, args []string) (int, error) {
	fs := newFlags("compare", e)
	asJSON := fs.Bool("json", false, "print the metrics as JSON (with several outputs, an array: one object per output)")
	gtMiB := fs.Int64("gt-memory-mib", compare.DefaultCacheBytes>>20, "with several outputs, keep at most this much of the decoded ground truth "+
		"in memory (`MIB`) rather than decode it for each; 0 decodes it every time")
	var limits compareLimits
	limits.register(fs)
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	if err := limits.validate(); err != nil {
		return 0, err
	}
	if fs.NArg() < 2 {
		return 0, usagef("want GT OUTPUT [OUTPUT...] (a ground truth and at least one output), got %d arguments", fs.NArg())
	}
	if compare.IsGTWAV(fs.Arg(0)) && limits.pictureLimits() {
		return 0, usagef("--min-ssim, --min-psnr and --max-mad judge pictures, and the audio ground truth %s has none: "+
			"give --case ID to judge with a case's audio thresholds", fs.Arg(0))
	}
	if *gtMiB < 0 {
		return 0, usagef("--gt-memory-mib: want ≥ 0, got %d", *gtMiB)
	}
	tools, err := probeMediaTools(ctx, e)
	if err != nil {
		return 0, err
	}
	gt, outs := fs.Arg(0), fs.Args()[1:]
	if len(outs) == 1 {
		// No frames to reuse: a cache of 0 bytes keeps none, only what the video's probe
		// said of the ground truth's audio (so that it is not probed again).
		return compareSingle(ctx, e, &limits, *asJSON, compare.NewCache(0, compare.Helpers{Tools: tools}), gt, outs[0])
	}
	return compareMany(ctx, e, &limits, *asJSON, compare.NewCache(*gtMiB<<20, compare.Helpers{Tools: tools}), gt, outs)
}

// verdictsTo is where compare writes its verdicts: stdout, or stderr when stdout is one JSON
// document.
func verdictsTo(e env, asJSON bool) io.Writer {
	if asJSON {
		return e.stderr
	}
	return e.stdout
}

// compareSingle compares one output with gt through cache and judges it against limits.
func compareSingle(ctx context.Context, e env, limits *compareLimits, asJSON bool, cache *compare.Cache, gt, out string) (int, error) {
	res, audio, err := compareOne(ctx, cache, gt, out)
	if err != nil {
		return 0, err // exitCode: a shape mismatch is a verdict (1), a decode failure 3
	}
	if asJSON {
		if err := writeJSON(e, withAudio(compareJSON(res), audio)); err != nil {
			return 0, err
		}
	} else {
		if err := compareTable(e, gt, out, res); err != nil {
			return 0, err
		}
		if err := audioTable(e, audio); err != nil {
			return 0, err
		}
	}
	return exitOK, limits.judge(verdictsTo(e, asJSON), out, res, audio)
}

// compareMany compares several outputs with gt, decoded once through cache: the pictures of
// every output in one pass (all the videos at the same time), then each output's audio. A
// failed output does not stop the others; the exit code is the worst of the failures.
func compareMany(ctx context.Context, e env, limits *compareLimits, asJSON bool, cache *compare.Cache, gt string, outs []string) (int, error) {
	worst := exitOK
	var failed []string
	var below []error
	var all []any
	pictures, perrs := picturesEach(ctx, cache, gt, outs)
	for i, out := range outs {
		res, audio, err := withAudioOf(ctx, cache, gt, out, pictures[i], perrs[i])
		if err != nil {
			// Worst first: a file that did not decode (3) over a mismatch (1).
			worst = max(worst, exitCode(err))
			failed = append(failed, fmt.Sprintf("%s: %v", out, err))
			all = append(all, struct {
				Output string `json:"output"`
				Error  string `json:"error"`
			}{out, err.Error()})
			continue
		}
		all = append(all, withOutput(out, withAudio(compareJSON(res), audio)))
		if !asJSON {
			if i > 0 {
				fmt.Fprintln(e.stdout)
			}
			if err := compareTable(e, gt, out, res); err != nil {
				return 0, err
			}
			if err := audioTable(e, audio); err != nil {
				return 0, err
			}
		}
		if err := limits.judge(verdictsTo(e, asJSON), out, res, audio); err != nil {
			below = append(below, err)
		}
	}
	if asJSON {
		if err := writeJSON(e, all); err != nil {
			return 0, err
		}
	}
	if len(failed) > 0 {
		err := fmt.Errorf("%d of %d outputs not compared:\n%s", len(failed), len(outs), strings.Join(failed, "\n"))
		if worst == exitFailed {
			return 0, failedError{err}
		}
		return 0, err
	}
	return exitOK, errors.Join(below...)
}

// gtMemory turns --gt-memory-mib into runner.Options.GTMemory, where 0 means the default and
// a negative value nothing.
func gtMemory(mib int64) int64 {
	if mib <= 0 {
		return -1
	}
	return mib << 20
}

// compareOne compares one output (pictures, then audio) with the ground truth; against an
// audio ground truth (a WAV), the audio alone.
func compareOne(ctx context.Context, cache *compare.Cache, gt, out string) (compare.Result, *compare.AudioResult, error) {
	res := compare.Result{Kind: kindAudio}
	var err error
	if !compare.IsGTWAV(gt) {
		res, err = cache.Files(ctx, gt, out)
	}
	return withAudioOf(ctx, cache, gt, out, res, err)
}

// picturesEach compares the pictures of every output with the ground truth at once
// (compare.Cache.FilesEach); against an audio ground truth there are none to compare.
func picturesEach(ctx context.Context, cache *compare.Cache, gt string, outs []string) ([]compare.Result, []error) {
	if !compare.IsGTWAV(gt) {
		return cache.FilesEach(ctx, gt, outs)
	}
	res := make([]compare.Result, len(outs))
	for i := range res {
		res[i].Kind = kindAudio
	}
	return res, make([]error, len(outs))
}

// withAudioOf completes the comparison of out's pictures (res, or the error that stopped it)
// with its audio.
func withAudioOf(ctx context.Context, cache *compare.Cache, gt, out string, res compare.Result, err error) (compare.Result, *compare.AudioResult, error) {
	if err != nil {
		return compare.Result{}, nil, err
	}
	audio, err := compareAudio(ctx, cache, gt, out, res)
	if err != nil {
		return compare.Result{}, nil, err
	}
	return res, audio, nil
}

func writeJSON(e env, v any) error {
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// withOutput adds the "output" key (the file compared) in front of a result's JSON form.
func withOutput(out string, v any) any {
	b, err := json.Marshal(v)
	key, kerr := json.Marshal(out)
	if err != nil || kerr != nil || len(b) < 2 || b[0] != '{' {
		return v
	}
	return json.RawMessage(slices.Concat([]byte(`{"output":`), key, []byte(","), b[1:]))
}

// finite turns +Inf (identical frames' PSNR) into null: JSON has no infinity.
func finite(v float64) *float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	return &v
}

type frameJSON struct {
	Index       int      `json:"index"`
	SSIM        float64  `json:"ssim"`
	PSNR        *float64 `json:"psnr"`
	MeanAbsDiff float64  `json:"mean_abs_diff"`
}

type imageJSON struct {
	Kind        string   `json:"kind"`
	Width       int      `json:"width"`
	Height      int      `json:"height"`
	SSIM        float64  `json:"ssim"`
	PSNR        *float64 `json:"psnr"`
	MeanAbsDiff float64  `json:"mean_abs_diff"`
}

type videoJSON struct {
	Kind            string      `json:"kind"`
	Width           int         `json:"width"`
	Height          int         `json:"height"`
	Frames          int         `json:"frames"`
	PerFrame        []frameJSON `json:"per_frame"`
	MinSSIM         float64     `json:"min_ssim"`
	MeanSSIM        float64     `json:"mean_ssim"`
	MinPSNR         *float64    `json:"min_psnr"`
	MeanPSNR        *float64    `json:"mean_psnr"`
	MaxMeanAbsDiff  float64     `json:"max_mean_abs_diff"`
	MeanMeanAbsDiff float64     `json:"mean_mean_abs_diff"`
	WorstFrame      int         `json:"worst_frame"`
}

// compareJSON is the JSON form of a comparison: psnr is null where it is +Inf (identical).
func compareJSON(r compare.Result) any {
	if r.Kind == kindAudio {
		return r // withAudio gives it its form
	}
	if r.Kind == "image" && len(r.PerFrame) == 1 {
		f := r.PerFrame[0]
		return imageJSON{Kind: r.Kind, Width: r.Width, Height: r.Height, SSIM: f.SSIM, PSNR: finite(f.PSNR), MeanAbsDiff: f.MeanAbsDiff}
	}
	v := videoJSON{Kind: r.Kind, Width: r.Width, Height: r.Height, Frames: r.Frames, PerFrame: make([]frameJSON, len(r.PerFrame)),
		MinSSIM: r.MinSSIM, MeanSSIM: r.MeanSSIM, MinPSNR: finite(r.MinPSNR), MeanPSNR: finite(r.MeanPSNR),
		MaxMeanAbsDiff: r.MaxMeanAbsDiff, MeanMeanAbsDiff: r.MeanMeanAbsDiff, WorstFrame: r.WorstFrame}
	for i, f := range r.PerFrame {
		v.PerFrame[i] = frameJSON{Index: f.Index, SSIM: f.SSIM, PSNR: finite(f.PSNR), MeanAbsDiff: f.MeanAbsDiff}
	}
	return v
}

// compareTable prints a comparison for people: one row per frame and the summaries.
func compareTable(e env, gt, out string, r compare.Result) error {
	if r.Kind == kindAudio {
		_, err := fmt.Fprintf(e.stdout, "audio: %s against audio ground truth %s\n", out, gt)
		return err
	}
	psnr := func(v float64) string {
		if math.IsInf(v, 1) {
			return "inf"
		}
		return fmt.Sprintf("%.2f", v)
	}
	if r.Kind == "image" && len(r.PerFrame) == 1 {
		f := r.PerFrame[0]
		fmt.Fprintf(e.stdout, "image %dx%d: %s against ground truth %s\n", r.Width, r.Height, out, gt)
		fmt.Fprintf(e.stdout, "ssim %.6f  psnr %s dB  mean_abs_diff %.4f\n", f.SSIM, psnr(f.PSNR), f.MeanAbsDiff)
		return nil
	}
	fmt.Fprintf(e.stdout, "video %dx%d, %d frames: %s against ground truth %s\n", r.Width, r.Height, r.Frames, out, gt)
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "frame\tssim\tpsnr dB\tmean_abs_diff\t")
	for _, f := range r.PerFrame {
		fmt.Fprintf(tw, "%d\t%.6f\t%s\t%.4f\t\n", f.Index, f.SSIM, psnr(f.PSNR), f.MeanAbsDiff)
	}
	fmt.Fprintf(tw, "min\t%.6f\t%s\t\t\n", r.MinSSIM, psnr(r.MinPSNR))
	fmt.Fprintf(tw, "mean\t%.6f\t%s\t%.4f\t\n", r.MeanSSIM, psnr(r.MeanPSNR), r.MeanMeanAbsDiff)
	fmt.Fprintf(tw, "max\t\t\t%.4f\t\n", r.MaxMeanAbsDiff)
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(e.stdout, "worst frame: %d (ssim %.6f)\n", r.WorstFrame, r.MinSSIM)
	return err
}
