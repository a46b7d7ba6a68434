package checks

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/diffusion-check/diffusion-check/results"
)

// TestRepeatJudgesEveryFrameAgainstRequest1 checks the repeat verdict: the worst frame is the
// value, one frame out of limit fails, identical outputs pass with PSNR +Inf, and the
// details say what was compared with.
func TestRepeatJudgesEveryFrameAgainstRequest1(t *testing.T) {
	lim := RepeatLimits{SSIM: 0.99, PSNR: 35, MeanAbsDiff: 1, Origin: "suite repeat_thresholds"}
	type got struct {
		Name, Detail, Cause string
		Status              results.Status
		Value               *float64
	}
	inf := math.Inf(1)
	for _, tc := range []struct {
		name   string
		frames []FrameScore
		total  int
		want   []got
	}{
		{"identical image", []FrameScore{{SSIM: 1, PSNR: inf, MeanAbsDiff: 0}}, 1, []got{
			{RepeatSSIM, "SSIM vs request 1 1.0000 (limit ≥ 0.99); thresholds: suite repeat_thresholds", "", results.Pass, Float(1)},
			{RepeatPSNR, "PSNR vs request 1 +Inf: identical to request 1; thresholds: suite repeat_thresholds", "", results.Pass, nil},
			{RepeatMeanAbsDiff, "mean abs diff vs request 1 0.0000 (limit ≤ 1); thresholds: suite repeat_thresholds", "", results.Pass, Float(0)},
		}},
		{"one drifting frame of three", []FrameScore{{0, 1, inf, 0}, {1, 0.6, 20, 9}, {2, 1, inf, 0}}, 3, []got{
			{RepeatSSIM, "min SSIM vs request 1 0.6000 at frame 1 of 3 (limit ≥ 0.99; mean 0.8667; 1 of 3 compared frames out of limit); thresholds: " +
				"suite repeat_thresholds", "drifts from frame 1 (1 of 3 frames)", results.Fail, Float(0.6)},
			{RepeatPSNR, "min PSNR vs request 1 20.0000 at frame 1 of 3 (limit ≥ 35; mean 20.0000; 1 of 3 compared frames out of limit); thresholds: " +
				"suite repeat_thresholds", "drifts from frame 1 (1 of 3 frames)", results.Fail, Float(20)},
			{RepeatMeanAbsDiff, "max mean abs diff vs request 1 9.0000 at frame 1 of 3 (limit ≤ 1; mean 3.0000; 1 of 3 compared frames out of limit); " +
				"thresholds: suite repeat_thresholds", "drifts from frame 1 (1 of 3 frames)", results.Fail, Float(9)},
		}},
		{"differing image", []FrameScore{{SSIM: 0.5, PSNR: 15, MeanAbsDiff: 30}}, 1, []got{
			{RepeatSSIM, "SSIM vs request 1 0.5000 (limit ≥ 0.99); thresholds: suite repeat_thresholds", "differs from request 1", results.Fail, Float(0.5)},
			{RepeatPSNR, "PSNR vs request 1 15.0000 (limit ≥ 35); thresholds: suite repeat_thresholds", "differs from request 1", results.Fail, Float(15)},
			{RepeatMeanAbsDiff, "mean abs diff vs request 1 30.0000 (limit ≤ 1); thresholds: suite repeat_thresholds", "differs from request 1", results.Fail,
				Float(30)},
		}},
		{"no frames", nil, 0, []got{
			{RepeatSSIM, "no frames were compared with request 1", "differs from request 1", results.Fail, nil},
			{RepeatPSNR, "no frames were compared with request 1", "differs from request 1", results.Fail, nil},
			{RepeatMeanAbsDiff, "no frames were compared with request 1", "differs from request 1", results.Fail, nil},
		}},
	} {
		var out []got
		for _, c := range Repeat(tc.frames, tc.total, lim) {
			out = append(out, got{c.Name, c.Detail, c.Cause, c.Status, c.Value})
		}
		if diff := cmp.Diff(tc.want, out); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

// TestRepeatAudioFailsADriftedTrack checks the audio repeat verdict on both sides of each
// limit.
func TestRepeatAudioFailsADriftedTrack(t *testing.T) {
	lim := DefaultRepeatLimits()
	statuses := func(cs []results.Check) []results.Status {
		var s []results.Status
		for _, c := range cs {
			s = append(s, c.Status)
		}
		return s
	}
	if diff := cmp.Diff([]results.Status{results.Pass, results.Pass, results.Pass, results.Pass}, statuses(RepeatAudio(AudioScores{1, 1, 0, 0},
		lim))); diff != "" {
		t.Errorf("identical track (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]results.Status{results.Fail, results.Fail, results.Fail, results.Fail}, statuses(RepeatAudio(AudioScores{0.98, 0.2, 3, 0.5},
		lim))); diff != "" {
		t.Errorf("drifted track (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]results.Status{results.Fail, results.Pass, results.Pass, results.Pass}, statuses(RepeatAudio(AudioScores{math.NaN(), 1, 0, 0},
		lim))); diff != "" {
		t.Errorf("NaN similarity (-want +got):\n%s", diff)
	}
}

// TestDiagnoseRepeatTellsALeakFromAGroundTruthMismatch is the classification's table: a
// drift from request 1 is a leak with or without ground truth; requests that agree with each
// other and all miss the ground truth are a ground-truth mismatch.
func TestDiagnoseRepeatTellsALeakFromAGroundTruthMismatch(t *testing.T) {
	ev := func(i int, gt results.Status, gtSSIM float64, rep results.Status, repSSIM float64) RepeatEvidence {
		e := RepeatEvidence{Index: i, GT: gt, Repeat: rep}
		if gt != "" {
			e.GTSSIM = Float(gtSSIM)
		}
		if rep != "" {
			e.RepeatSSIM = Float(repSSIM)
		}
		return e
	}
	type view struct {
		Shape               RepeatShape
		Drifting, GTFailing []int
		NoGT                bool
		TextHas, TextHasNot string
	}
	for _, tc := range []struct {
		name string
		ev   []RepeatEvidence
		want view
	}{
		{"all agree, no ground truth", []RepeatEvidence{ev(1, "", 0, "", 0), ev(2, "", 0, results.Pass, 1)},
			view{Shape: ShapeNone, NoGT: true}},
		{"all agree with each other and the ground truth", []RepeatEvidence{ev(1, results.Pass, 0.99, "", 0), ev(2, results.Pass, 0.99, results.Pass, 1)},
			view{Shape: ShapeNone}},
		{"request 2 drifts, no ground truth", []RepeatEvidence{ev(1, "", 0, "", 0), ev(2, "", 0, results.Fail, 0.4)},
			view{Shape: ShapeLeak, Drifting: []int{2}, NoGT: true,
				TextHas:    "request 2 drifts from request 1 of the same server start (SSIM vs request 1 down to 0.4000): a state leak",
				TextHasNot: "not a ground-truth problem"}},
		{"request 2 drifts, request 1 matches the ground truth", []RepeatEvidence{ev(1, results.Pass, 0.99, "", 0), ev(2, results.Fail, 0.4, results.Fail,
			0.4)},
			view{Shape: ShapeLeak, Drifting: []int{2}, GTFailing: []int{2}, TextHas: "not a ground-truth problem (request 1 matches the ground truth)"}},
		{"requests 2 and 3 drift and request 1 misses the ground truth",
			[]RepeatEvidence{ev(1, results.Fail, 0.8, "", 0), ev(2, results.Fail, 0.7, results.Fail, 0.6), ev(3, results.Fail, 0.7, results.Fail, 0.6)},
			view{Shape: ShapeLeakAndGTMismatch, Drifting: []int{2, 3}, GTFailing: []int{1, 2, 3}, TextHas: "requests 2, 3 drift from request 1"}},
		{"every request misses the ground truth by the same amount",
			[]RepeatEvidence{ev(1, results.Fail, 0.81, "", 0), ev(2, results.Fail, 0.81, results.Pass, 1), ev(3, results.Fail, 0.81, results.Pass, 1)},
			view{Shape: ShapeGTMismatch, GTFailing: []int{1, 2, 3},
				TextHas: "every request differs from the ground truth by the same amount (SSIM vs ground truth 0.8100 on all 3)"}},
		{"the same amount, told by the check furthest past its limit", []RepeatEvidence{offGT(ev(1, results.Fail, 0.99, "", 0)), offGT(ev(2, results.Fail,
			0.99, results.Pass, 1))},
			view{Shape: ShapeGTMismatch, GTFailing: []int{1, 2}, TextHas: "(mean abs diff vs ground truth 12.0000, SSIM vs ground truth 0.9900 on all 2)"}},
		{"requests agree but straddle the ground truth's limit", []RepeatEvidence{ev(1, results.Pass, 0.951, "", 0), ev(2, results.Fail, 0.949,
			results.Pass, 0.995)},
			view{Shape: ShapeBorderline, GTFailing: []int{2},
				TextHas: "request 2 fails the ground truth and the others pass it (SSIM vs ground truth 0.9490–0.9510)"}},
		{"request 2 not compared with request 1: no claim", []RepeatEvidence{ev(1, results.Fail, 0.8, "", 0), ev(2, results.Fail, 0.8, "", 0)},
			view{Shape: ShapeNone, GTFailing: []int{1, 2}}},
		{"one request only: no claim", []RepeatEvidence{ev(1, results.Fail, 0.8, "", 0)},
			view{Shape: ShapeNone, GTFailing: []int{1}}},
		{"ground truth fails on request 1 alone of one pair: borderline, not a mismatch", []RepeatEvidence{ev(1, results.Fail, 0.94, "", 0), ev(2,
			results.Pass, 0.951, results.Pass, 0.999)},
			view{Shape: ShapeBorderline, GTFailing: []int{1}, TextHas: "request 1 fails the ground truth"}},
	} {
		d := DiagnoseRepeat(tc.ev)
		got := view{Shape: d.Shape, Drifting: d.Drifting, GTFailing: d.GTFailing, NoGT: d.NoGT, TextHas: tc.want.TextHas, TextHasNot: tc.want.TextHasNot}
		if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
		text := d.Text()
		if (d.Shape == ShapeNone) != (text == "") {
			t.Errorf("%s: shape %q with text %q", tc.name, d.Shape, text)
		}
		if tc.want.TextHas != "" && !strings.Contains(text, tc.want.TextHas) {
			t.Errorf("%s: text %q lacks %q", tc.name, text, tc.want.TextHas)
		}
		if tc.want.TextHasNot != "" && strings.Contains(text, tc.want.TextHasNot) {
			t.Errorf("%s: text %q has %q", tc.name, text, tc.want.TextHasNot)
		}
	}
}

// TestRepeatEvidenceOfReadsTheChecks checks which checks count as evidence: measured
// ground-truth and repeat metrics; the group checks (no ground truth, not compared), skips
// and errors do not.
func TestRepeatEvidenceOfReadsTheChecks(t *testing.T) {
	gtSSIM, repSSIM := results.Check{Name: ConsistencySSIM, Status: results.Pass, Value: Float(0.97)}, results.Check{Name: RepeatSSIM,
		Status: results.Fail, Value: Float(0.5)}
	cr := results.CaseResult{Requests: []results.RequestResult{
		{Index: 1, Checks: []results.Check{{Name: results.OutputValid, Status: results.Pass}, {Name: ConsistencyGroup, Status: results.Fail,
			Detail: "GT not found"}}},
		{
			Index: 2,
			Checks: []results.Check{
				gtSSIM,
				{Name: ConsistencyMeanAbsDiff, Status: results.Fail, Value: Float(12), Limit: Float(8)},
				{Name: AudioSpectralSimilarity, Status: results.Known},
				repSSIM,
				{Name: RepeatAudioSpectralSimilarity, Status: results.Pass},
			},
		},
		{Index: 3, Checks: []results.Check{{Name: ConsistencyCLIP, Status: results.Skip}, {Name: RepeatGroup, Status: results.Skip}, {Name: RepeatPSNR,
			Status: results.Error}}},
	}}
	want := []RepeatEvidence{
		{Index: 1},
		{Index: 2, GT: results.Fail, GTSSIM: Float(0.97), Repeat: results.Fail, RepeatSSIM: Float(0.5),
			GTFailed: map[string]Measured{ConsistencyMeanAbsDiff: {12, 8}}},
		{Index: 3},
	}
	if diff := cmp.Diff(want, RepeatEvidenceOf(cr)); diff != "" {
		t.Errorf("RepeatEvidenceOf (-want +got):\n%s", diff)
	}
}

// offGT is e failing the ground truth as a uniform offset of 12 levels does: mean abs diff
// 12 > 8 (1.5×) and PSNR 26.5 < 28 (1.06×).
func offGT(e RepeatEvidence) RepeatEvidence {
	e.GTFailed = map[string]Measured{ConsistencyMeanAbsDiff: {12, 8}, ConsistencyPSNR: {26.5, 28}}
	return e
}
