package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/diffusion-check/diffusion-check/baselines"
	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/compare"
	"github.com/diffusion-check/diffusion-check/results"
)

// compareLimits are compare's thresholds: explicit limits, or a case's limits read from a
// consistency-thresholds file (or folder of them, with --gpu), or both (the explicit ones win).
// Without any, compare only measures.
type compareLimits struct {
	minSSIM, minPSNR, maxMAD float64 // NaN: not given
	// audio are the explicit audio limits, in checks.AudioConsistency's order: spectral
	// similarity, waveform correlation (at least), RMS level difference in dB, duration
	// difference in s (at most); NaN: not given.
	audio                   [4]float64
	thresholds, gpu, caseID string
}

func (l *compareLimits) register(fs *flag.FlagSet) {
	l.minSSIM, l.minPSNR, l.maxMAD = math.NaN(), math.NaN(), math.NaN()
	fs.Func("min-ssim", "fail (exit 1) when a compared frame's SSIM is below `X`", floatFlag(&l.minSSIM))
	fs.Func("min-psnr", "fail when a compared frame's PSNR is below `DB`", floatFlag(&l.minPSNR))
	fs.Func("max-mad", "fail when a compared frame's mean absolute difference (0-255) is above `X`", floatFlag(&l.maxMAD))
	l.audio = [4]float64{math.NaN(), math.NaN(), math.NaN(), math.NaN()}
	fs.Func("min-spectral-similarity", "fail when the audio's spectral similarity to the ground truth's is below `X`", floatFlag(&l.audio[0]))
	fs.Func("min-waveform-correlation", "fail when the audio's waveform correlation with the ground truth's is below `X`", floatFlag(&l.audio[1]))
	fs.Func("max-rms-db-diff", "fail when the audio's RMS level differs from the ground truth's by more than `DB`", floatFlag(&l.audio[2]))
	fs.Func("max-duration-diff", "fail when the audio's duration differs from the ground truth's by more than `S` seconds", floatFlag(&l.audio[3]))
	fs.StringVar(&l.thresholds, "thresholds", "",
		"consistency thresholds `PATH`: a <gpu>.json file or a folder of them (with --gpu); default: the built-in SGLang defaults")
	fs.StringVar(&l.gpu, "gpu", "", "GPU `CLASS` whose file in the --thresholds folder applies")
	fs.StringVar(
		&l.caseID,
		"case",
		"",
		"judge with this case `ID`'s SSIM, PSNR and mean abs diff thresholds (its entry, else the file's defaults for the output kind) and, "+
			"when the ground truth has audio, its audio thresholds",
	)
}

// floatFlag parses a finite number into *v.
func floatFlag(v *float64) func(string) error {
	return func(s string) error {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("want a number, got %q", s)
		}
		*v = f
		return nil
	}
}

// active reports whether any threshold was given: compare then judges as well as measures.
func (l *compareLimits) active() bool {
	return l.caseID != "" || l.pictureLimits() || l.audioLimits()
}

// audioLimits reports whether a limit of the audio was given explicitly.
func (l *compareLimits) audioLimits() bool {
	return slices.ContainsFunc(l.audio[:], func(v float64) bool { return !math.IsNaN(v) })
}

// pictureLimits reports whether a limit of the pictures was given explicitly.
func (l *compareLimits) pictureLimits() bool {
	return !math.IsNaN(l.minSSIM) || !math.IsNaN(l.minPSNR) || !math.IsNaN(l.maxMAD)
}

// validate reports flags that cannot work together.
func (l *compareLimits) validate() error {
	if l.caseID == "" && (l.thresholds != "" || l.gpu != "") {
		return usagef("--thresholds and --gpu choose the limits of a case: give --case ID too")
	}
	return nil
}

// limits resolves the limits for an image or a video and names the checks they enforce.
func (l *compareLimits) limits(video bool) (checks.ConsistencyLimits, []string, error) {
	var lim checks.ConsistencyLimits
	var names []string
	if l.caseID != "" {
		th, err := baselines.ThresholdsFor(l.thresholds, l.gpu)
		if err != nil {
			return lim, nil, usageError{err}
		}
		lim = th.For(l.caseID, video)
		names = []string{checks.ConsistencySSIM, checks.ConsistencyPSNR, checks.ConsistencyMeanAbsDiff}
	}
	for _, x := range []struct {
		v    float64
		into *float64
		name string
	}{{l.minSSIM, &lim.SSIM, checks.ConsistencySSIM}, {l.minPSNR, &lim.PSNR, checks.ConsistencyPSNR},
		{l.maxMAD, &lim.MeanAbsDiff, checks.ConsistencyMeanAbsDiff}} {
		if !math.IsNaN(x.v) {
			*x.into = x.v
			if !slices.Contains(names, x.name) {
				names = append(names, x.name)
			}
		}
	}
	if lim.Origin == "" {
		lim.Origin = "the command line"
	}
	return lim, names, nil
}

// verdict judges a comparison with the same rules as a run's consistency checks (every
// compared frame must pass) and returns the checks of the limits given.
func (l *compareLimits) verdict(r compare.Result) ([]results.Check, error) {
	lim, names, err := l.limits(r.Kind == "video")
	if err != nil {
		return nil, err
	}
	frames := make([]checks.FrameScore, len(r.PerFrame))
	for i, f := range r.PerFrame {
		frames[i] = checks.FrameScore{Index: f.Index, SSIM: f.SSIM, PSNR: f.PSNR, MeanAbsDiff: f.MeanAbsDiff}
	}
	var out []results.Check
	for _, c := range checks.Consistency(frames, r.Frames, lim) {
		if slices.Contains(names, c.Name) {
			out = append(out, c)
		}
	}
	return out, nil
}

// judge prints the verdict of each check to w and returns a failedError (exit 1) naming the
// output when one failed: the output's audio track as run checks it (silent, empty, not finite:
// always, whatever limits were given), and with limits, the pictures (not against an audio
// ground truth) and the audio.
func (l *compareLimits) judge(w io.Writer, out string, r compare.Result, audio *compare.AudioResult) error {
	var cs []results.Check
	if audio != nil && audio.OutputProblem != "" {
		cs = append(cs, checks.Failed(results.OutputValid, audio.OutputProblem))
	}
	if l.active() {
		if r.Kind != kindAudio {
			pics, err := l.verdict(r)
			if err != nil {
				return err
			}
			cs = append(cs, pics...)
		}
		sound, err := l.audioVerdict(r, audio)
		if err != nil {
			return err
		}
		cs = append(cs, sound...)
	}
	var failed, problems []string
	for _, c := range cs {
		fmt.Fprintf(w, "%s: %s  %s\n", c.Name, c.Status, c.Detail)
		switch {
		case c.Name == results.OutputValid:
			problems = append(problems, c.Detail)
		case c.Status == results.Fail || c.Status == results.Error:
			failed = append(failed, c.Name)
		}
	}
	var errs []error
	if len(problems) > 0 {
		errs = append(errs, fmt.Errorf("%s: %s: %s", out, results.OutputValid, strings.Join(problems, "; ")))
	}
	if len(failed) > 0 {
		errs = append(errs, fmt.Errorf("%s: below its thresholds: %s", out, strings.Join(failed, ", ")))
	}
	if len(errs) > 0 {
		return failedError{errors.Join(errs...)}
	}
	return nil
}
