package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"text/tabwriter"

	"github.com/diffusion-check/diffusion-check/internal/compare"
)

// compareCmd measures an output against its ground truth and, when thresholds are given,
// judges it: exit 0 when compared (and within the thresholds), 1 when below a threshold or
// the shapes differ (size, frame count, image vs video), 2 on usage errors, 3 when a file
// could not be decoded.
func compareCmd(ctx context.Context, e env, args []string) (int, error) {
	fs := newFlags("compare", e)
	asJSON := fs.Bool("json", false, "print the metrics as JSON")
	var limits compareLimits
	limits.register(fs)
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	if err := limits.validate(); err != nil {
		return 0, err
	}
	if fs.NArg() != 2 {
		return 0, usagef("want GT OUTPUT (two files), got %d arguments", fs.NArg())
	}
	res, err := compare.Files(ctx, fs.Arg(0), fs.Arg(1))
	var audio *compare.AudioResult
	if err == nil {
		audio, err = compareAudio(ctx, fs.Arg(0), fs.Arg(1), res)
	}
	if err != nil {
		return 0, err // exitCode: a shape mismatch is a verdict (1), a decode failure 3
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(withAudio(compareJSON(res), audio)); err != nil {
			return 0, err
		}
	} else {
		if err := compareTable(e, fs.Arg(0), fs.Arg(1), res); err != nil {
			return 0, err
		}
		if err := audioTable(e, audio); err != nil {
			return 0, err
		}
	}
	verdicts := e.stdout
	if *asJSON {
		verdicts = e.stderr // stdout is one JSON document
	}
	return exitOK, limits.judge(verdicts, fs.Arg(1), res)
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
