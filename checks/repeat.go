package checks

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/diffusion-check/diffusion-check/results"
)

// Names of the repeat checks: request k ≥ 2 of a case against request 1 of the same server
// start, with the same request (and so the same seed). They see a state leak from one request
// into the next without any ground truth.
const (
	RepeatSSIM                     = "consistency.repeat.ssim"
	RepeatPSNR                     = "consistency.repeat.psnr"
	RepeatMeanAbsDiff              = "consistency.repeat.mean_abs_diff"
	RepeatAudioSpectralSimilarity  = "consistency.repeat.audio_spectral_similarity"
	RepeatAudioWaveformCorrelation = "consistency.repeat.audio_waveform_correlation"
	RepeatAudioRMSdBDiff           = "consistency.repeat.audio_rms_db_diff"
	RepeatAudioDurationDiff        = "consistency.repeat.audio_duration_diff"

	// RepeatGroup names the one check a request gets when it was not compared with request 1
	// (request 1 has no valid output, the case turned the check off): a skip with the reason.
	RepeatGroup = "consistency.repeat"
)

// repeatRef is what the repeat checks compare with, in their details.
const repeatRef = "request 1"

// RepeatLimits are the thresholds of the repeat checks of one case: a frame of request k
// passes when its SSIM against the same frame of request 1 is ≥ SSIM, its PSNR ≥ PSNR and
// its mean absolute difference ≤ MeanAbsDiff; its audio when spectral similarity and
// waveform correlation are at least, RMS level difference (dB) and duration difference (s)
// at most theirs. Origin says where they were set, for the details.
type RepeatLimits struct {
	SSIM, PSNR, MeanAbsDiff                                           float64
	SpectralSimilarity, WaveformCorrelation, RMSdBDiff, DurationDiffS float64
	Origin                                                            string
}

// DefaultRepeatLimits are the repeat thresholds of a suite that sets none: "the same output
// within what a GPU's nondeterminism allows". docs/consistency.md says what they rest on
// (the reference server's outputs are identical; two runs of the same bf16 GPU work in one
// process on an H200 were too) and how to measure a GPU class's own.
func DefaultRepeatLimits() RepeatLimits {
	return RepeatLimits{SSIM: 0.99, PSNR: 35, MeanAbsDiff: 1,
		SpectralSimilarity: 0.999, WaveformCorrelation: 0.99, RMSdBDiff: 0.1, DurationDiffS: 0.001,
		Origin: "built-in repeat defaults"}
}

// Repeat turns the metrics of request k's frames against the same frames of request 1 into
// the checks consistency.repeat.ssim, .psnr and .mean_abs_diff; total is the output's frame
// count. As Consistency: every frame must pass, the worst frame is the value and the detail
// names it, NaN or no frames fail, identical frames (PSNR +Inf) pass.
func Repeat(frames []FrameScore, total int, lim RepeatLimits) []results.Check {
	if len(frames) == 0 {
		return RepeatFailed("no frames were compared with request 1", false)
	}
	return []results.Check{
		metricCheck(RepeatSSIM, "SSIM vs request 1", "", repeatRef, frames, total, lim.SSIM, true, lim.Origin, func(f FrameScore) float64 { return f.SSIM }),
		metricCheck(RepeatPSNR, "PSNR vs request 1", "dB", repeatRef, frames, total, lim.PSNR, true, lim.Origin, func(f FrameScore) float64 { return f.PSNR }),
		metricCheck(RepeatMeanAbsDiff, "mean abs diff vs request 1", "", repeatRef, frames, total, lim.MeanAbsDiff, false, lim.Origin,
			func(f FrameScore) float64 { return f.MeanAbsDiff }),
	}
}

// RepeatAudio turns the audio metrics of request k's track against request 1's into the four
// consistency.repeat.audio_* checks. A NaN metric fails.
func RepeatAudio(s AudioScores, lim RepeatLimits) []results.Check {
	al := AudioLimits{SpectralSimilarity: lim.SpectralSimilarity, WaveformCorrelation: lim.WaveformCorrelation,
		RMSdBDiff: lim.RMSdBDiff, DurationDiffS: lim.DurationDiffS, Origin: lim.Origin}
	return audioChecks(s, al, repeatRef, " vs request 1",
		[4]string{RepeatAudioSpectralSimilarity, RepeatAudioWaveformCorrelation, RepeatAudioRMSdBDiff, RepeatAudioDurationDiff})
}

// RepeatFailed fails the picture checks (audio false) or the audio checks (audio true) of
// the repeat comparison with one detail, for an output that cannot be compared with request
// 1's because their shapes differ (size, frame count, an audio track missing): request k is
// not the output request 1 was, which is the failure itself.
func RepeatFailed(detail string, audio bool) []results.Check {
	names := []string{RepeatSSIM, RepeatPSNR, RepeatMeanAbsDiff}
	if audio {
		names = []string{RepeatAudioSpectralSimilarity, RepeatAudioWaveformCorrelation, RepeatAudioRMSdBDiff, RepeatAudioDurationDiff}
	}
	out := make([]results.Check, len(names))
	for i, n := range names {
		out[i] = Failed(n, detail)
		out[i].Cause = "differs from request 1"
	}
	return out
}

// RepeatShape is what the outputs of a case's requests say together, against each other and
// against the ground truth (DiagnoseRepeat).
type RepeatShape string

// The shapes.
const (
	// ShapeNone: nothing to tell across requests (they agree with request 1 and with the
	// ground truth, or there was one request).
	ShapeNone RepeatShape = ""
	// ShapeLeak: a later request drifts from request 1 of the same server start: state leaks
	// from one request into the next, whatever the ground truth says.
	ShapeLeak RepeatShape = "leak"
	// ShapeLeakAndGTMismatch: a later request drifts from request 1, and request 1 already
	// differs from the ground truth.
	ShapeLeakAndGTMismatch RepeatShape = "leak+gt_mismatch"
	// ShapeGTMismatch: every request differs from the ground truth by the same amount while
	// they agree with each other: the ground truth was made on another GPU class (or by
	// another version), not a leak.
	ShapeGTMismatch RepeatShape = "gt_mismatch"
	// ShapeBorderline: the requests agree with each other, yet some pass the ground truth
	// and some fail it: they sit at its limit, within the GPU's nondeterminism.
	ShapeBorderline RepeatShape = "borderline"
)

// RepeatEvidence is what one request of a case says for the diagnosis: its ground-truth
// verdict and its repeat verdict, each with its lowest SSIM. A status is "" where the request
// was not compared (no ground truth; request 1 has no repeat comparison).
type RepeatEvidence struct {
	Index      int
	GT         results.Status
	GTSSIM     *float64
	Repeat     results.Status
	RepeatSSIM *float64
	// GTFailed holds every ground-truth check that failed with a value and a limit, by name,
	// so that a diagnosis can say by how much (e.g. mean abs diff 12 on every request).
	GTFailed map[string]Measured
}

// Measured is a check's value against its limit.
type Measured struct{ Value, Limit float64 }

// RepeatEvidenceOf reads the evidence of every request of a case from its checks: the
// measured ground-truth checks (consistency and audio metrics that passed or failed; a
// known failure counts as failed, a skip or an error as not compared) and the repeat
// checks likewise.
func RepeatEvidenceOf(cr results.CaseResult) []RepeatEvidence {
	out := make([]RepeatEvidence, 0, len(cr.Requests))
	for _, rr := range cr.Requests {
		e := RepeatEvidence{Index: rr.Index}
		for _, c := range rr.Checks {
			st := measured(c.Status)
			if st == "" {
				continue
			}
			switch g := KindOf(c.Name).Group; {
			case (g == GroupConsistency || g == GroupAudio) && c.Name != ConsistencyGroup && c.Name != AudioGroup:
				e.GT = worseOf(e.GT, st)
				if c.Name == ConsistencySSIM {
					e.GTSSIM = c.Value
				}
				if st == results.Fail && c.Value != nil && c.Limit != nil {
					if e.GTFailed == nil {
						e.GTFailed = map[string]Measured{}
					}
					e.GTFailed[c.Name] = Measured{*c.Value, *c.Limit}
				}
			case g == GroupRepeat && c.Name != RepeatGroup:
				e.Repeat = worseOf(e.Repeat, st)
				if c.Name == RepeatSSIM {
					e.RepeatSSIM = c.Value
				}
			}
		}
		out = append(out, e)
	}
	return out
}

// measured is a check's status as evidence: Pass, Fail (a failure, known or not), or "" for
// a check that measured nothing (skip, error, cancelled).
func measured(s results.Status) results.Status {
	switch s {
	case results.Pass:
		return results.Pass
	case results.Fail, results.Known, results.Flaky:
		return results.Fail
	}
	return ""
}

func worseOf(a, b results.Status) results.Status {
	if a == results.Fail || b == results.Fail {
		return results.Fail
	}
	if a == results.Pass || b == results.Pass {
		return results.Pass
	}
	return ""
}

// RepeatDiagnosis is the shape of a case's outputs across its requests, with the requests
// that show it.
type RepeatDiagnosis struct {
	Shape RepeatShape
	// Drifting are the requests k ≥ 2 that failed a repeat check.
	Drifting []int
	// GTFailing are the requests that failed a ground-truth check; GTCompared those compared
	// with the ground truth at all.
	GTFailing, GTCompared []int
	// NoGT is set when no request of the case was compared with a ground truth.
	NoGT bool
	// GTSSIMLow and GTSSIMHigh bound the lowest SSIM against the ground truth over the
	// requests that have one (NaN when none has).
	GTSSIMLow, GTSSIMHigh float64
	// RepeatSSIMLow is the lowest SSIM of a later request against request 1 (NaN: none).
	RepeatSSIMLow float64
	// GTMetric is the ground-truth check that failed furthest past its limit on the first
	// request that failed one (by its kind's Beyond), and GTMetricLow, GTMetricHigh bound its
	// value over the requests where it failed; "" when no failure had a value.
	GTMetric                  string
	GTMetricLow, GTMetricHigh float64
}

// DiagnoseRepeat tells apart the two ways a case's outputs go wrong across its requests:
// a later request drifts from request 1 (a leak: ShapeLeak, or
// ShapeLeakAndGTMismatch when request 1 also differs from the ground truth), or every
// request differs from the ground truth by the same amount while they agree with each other
// (ShapeGTMismatch: the ground truth is of another GPU class). Requests that agree with
// each other but straddle the ground truth's limit are ShapeBorderline. A drift decides
// whatever the ground truth says: it is seen without one.
func DiagnoseRepeat(ev []RepeatEvidence) RepeatDiagnosis {
	d := RepeatDiagnosis{GTSSIMLow: math.NaN(), GTSSIMHigh: math.NaN(), RepeatSSIMLow: math.NaN()}
	firstFailsGT, agree, compared := false, true, 0
	for _, e := range ev {
		if e.Repeat == results.Fail {
			d.Drifting = append(d.Drifting, e.Index)
		}
		if e.Index >= 2 {
			if e.Repeat != "" {
				compared++
			}
			if e.Repeat != results.Pass {
				agree = false
			}
		}
		if e.GT != "" {
			d.GTCompared = append(d.GTCompared, e.Index)
		}
		if e.GT == results.Fail {
			d.GTFailing = append(d.GTFailing, e.Index)
			if e.Index == 1 {
				firstFailsGT = true
			}
		}
		if v := e.GTSSIM; v != nil && !math.IsNaN(*v) {
			if math.IsNaN(d.GTSSIMLow) || *v < d.GTSSIMLow {
				d.GTSSIMLow = *v
			}
			if math.IsNaN(d.GTSSIMHigh) || *v > d.GTSSIMHigh {
				d.GTSSIMHigh = *v
			}
		}
		if v := e.RepeatSSIM; v != nil && !math.IsNaN(*v) && (math.IsNaN(d.RepeatSSIMLow) || *v < d.RepeatSSIMLow) {
			d.RepeatSSIMLow = *v
		}
	}
	d.NoGT = len(d.GTCompared) == 0
	d.worstGTMetric(ev)
	switch {
	case len(d.Drifting) > 0 && firstFailsGT:
		d.Shape = ShapeLeakAndGTMismatch
	case len(d.Drifting) > 0:
		d.Shape = ShapeLeak
	case compared == 0 || !agree || len(d.GTFailing) == 0:
		// One request, a later one not compared with request 1, or no ground-truth failure:
		// nothing across requests to tell.
	case len(d.GTFailing) == len(d.GTCompared) && len(d.GTCompared) >= 2:
		d.Shape = ShapeGTMismatch
	default:
		d.Shape = ShapeBorderline
	}
	return d
}

// Text says the diagnosis in one sentence for a reader, "" for ShapeNone.
func (d RepeatDiagnosis) Text() string {
	drift := func() string {
		s := fmt.Sprintf("%s %s from request 1 of the same server start", requestList(d.Drifting), verb(len(d.Drifting), "drifts", "drift"))
		if !math.IsNaN(d.RepeatSSIMLow) {
			s += fmt.Sprintf(" (SSIM vs request 1 down to %.4f)", d.RepeatSSIMLow)
		}
		return s
	}
	switch d.Shape {
	case ShapeLeak:
		s := drift() + ": a state leak from one request into the next"
		if !d.NoGT && !slices.Contains(d.GTFailing, 1) {
			s += ", not a ground-truth problem (request 1 matches the ground truth)"
		}
		return s
	case ShapeLeakAndGTMismatch:
		return drift() + ", a state leak; request 1 already differs from the ground truth too (" + d.gtRange() +
			"), so the ground truth may also be of another GPU class"
	case ShapeGTMismatch:
		return fmt.Sprintf(
			"every request differs from the ground truth by the same amount (%s on all %d) while the requests agree with request 1: "+
				"the ground truth was made on another GPU class or by another version, not a leak",
			d.gtRange(),
			len(d.GTCompared),
		)
	case ShapeBorderline:
		return fmt.Sprintf(
			"%s %s the ground truth and the others pass it (%s) although every request agrees with request 1: the outputs sit at the ground truth's limit, "+
				"within the GPU's nondeterminism, not a leak",
			requestList(d.GTFailing),
			verb(len(d.GTFailing), "fails", "fail"),
			d.gtRange(),
		)
	}
	return ""
}

// worstGTMetric sets GTMetric and its range (see RepeatDiagnosis): of the first request that
// failed a ground-truth check with a value, the check furthest past its limit (its kind's
// Beyond; a tie goes to the first name, the same on every run).
func (d *RepeatDiagnosis) worstGTMetric(ev []RepeatEvidence) {
	for _, e := range ev {
		names := make([]string, 0, len(e.GTFailed))
		for n := range e.GTFailed {
			names = append(names, n)
		}
		slices.Sort(names)
		worst := 0.0
		for _, n := range names {
			m := e.GTFailed[n]
			if b := KindOf(n).Beyond(m.Value, m.Limit); d.GTMetric == "" || b > worst {
				d.GTMetric, worst = n, b
			}
		}
		if d.GTMetric != "" {
			break
		}
	}
	if d.GTMetric == "" {
		return
	}
	d.GTMetricLow, d.GTMetricHigh = math.NaN(), math.NaN()
	for _, e := range ev {
		if m, ok := e.GTFailed[d.GTMetric]; ok {
			if math.IsNaN(d.GTMetricLow) || m.Value < d.GTMetricLow {
				d.GTMetricLow = m.Value
			}
			if math.IsNaN(d.GTMetricHigh) || m.Value > d.GTMetricHigh {
				d.GTMetricHigh = m.Value
			}
		}
	}
}

func (d RepeatDiagnosis) gtRange() string {
	span := func(label string, lo, hi float64) string {
		if lo == hi {
			return fmt.Sprintf("%s vs ground truth %.4f", label, lo)
		}
		return fmt.Sprintf("%s vs ground truth %.4f–%.4f", label, lo, hi)
	}
	var parts []string
	if d.GTMetric != "" && d.GTMetric != ConsistencySSIM {
		parts = append(parts, span(KindOf(d.GTMetric).Title(d.GTMetric), d.GTMetricLow, d.GTMetricHigh))
	}
	if !math.IsNaN(d.GTSSIMLow) {
		parts = append(parts, span("SSIM", d.GTSSIMLow, d.GTSSIMHigh))
	}
	if len(parts) == 0 {
		return "SSIM vs ground truth not measured"
	}
	return strings.Join(parts, ", ")
}

// requestList names requests: "request 2", "requests 2, 3".
func requestList(idx []int) string {
	parts := make([]string, len(idx))
	for i, k := range idx {
		parts[i] = strconv.Itoa(k)
	}
	if len(idx) == 1 {
		return "request " + parts[0]
	}
	return "requests " + strings.Join(parts, ", ")
}

func verb(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
