package runner

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"sync"

	"github.com/diffusion-check/diffusion-check/baselines"
	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/compare"
	"github.com/diffusion-check/diffusion-check/internal/metrics"
	"github.com/diffusion-check/diffusion-check/internal/pictures"
	"github.com/diffusion-check/diffusion-check/results"
	"github.com/diffusion-check/diffusion-check/suite"
)

// repeatPrefix names the pictures of a repeat failure in request k's artifact folder:
// consistency-repeat-frame-<f>.png (request 1 | request k | SSIM map of the worst frame f)
// and consistency-repeat-ssim.png (SSIM per frame against request 1 and against the ground
// truth). failureIndex lists them with the other consistency pictures (the record names them).
const repeatPrefix = "consistency-repeat-"

// firstOutput is request 1 of a case: the output every later request of the same server start
// is compared with. Every request of a case is the same request, seed included (a request
// without one gets SGLang's default, 42: SamplingParams.seed in configs/sample/
// sampling_params.py, as build_sampling_params in entrypoints/openai/utils.py drops the None),
// so on a server that keeps no state between requests they are the same output within the
// GPU's nondeterminism.
type firstOutput struct {
	done     chan struct{} // closed once request 1 has finished, whatever became of it
	finished sync.Once     // guards done
	srv      *server       // the server start request 1 ran on
	// path is request 1's output; "" when it has none to compare with, and why says why.
	path, why string
	// cache is the case's cache (consistencyConfig.cache): it holds request 1's output as
	// its output check decoded it, kept until the case ends (keepOutput), and each later
	// request's until it has been compared, so that no output is decoded twice.
	cache *compare.Cache
	// evidence is request 1's ground-truth verdict, for the diagnosis in the pictures.
	evidence checks.RepeatEvidence

	// Request 1 against the ground truth, per frame, for the curves; compared once, by the
	// first later request that draws them.
	gtOnce   sync.Once
	gtFrames []compare.Frame
}

// first returns request 1's record of case id, made by whichever of the case's requests asks
// first (with concurrency, request 2 may finish before request 1 has).
func (cc *consistencyConfig) first(id string, srv *server) *firstOutput {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	f := cc.firsts[id]
	if f == nil {
		f = &firstOutput{done: make(chan struct{}), srv: srv, cache: cc.cacheLocked(id)}
		cc.firsts[id] = f
	}
	return f
}

// forgetOutput drops the decoded output of request rr of case c from the case's cache once
// its checks are made (the output check kept it for them: compare.Cache.Output), except
// request 1's when later requests are compared with it (repeat): that one is dropped with the
// case's cache when the case ends (dropCache).
func (v *validator) forgetOutput(c *suite.Case, rr *results.RequestResult) {
	if rr.Output == nil || (rr.Index == 1 && c.Repeat > 1 && suite.Enabled(c.Checks.Repeat)) {
		return
	}
	v.cons.cache(c.ID).Forget(rr.Output.Path)
}

// repeat runs the repeat checks of one request of case c as it finishes on srv (every one of
// the case's Repeat requests, whatever became of it; not the confirmation requests): request
// 1's output is kept as the reference of its server start, and each request k ≥ 2 is compared
// with it — every frame (consistency.repeat.ssim, .psnr, .mean_abs_diff) and, for video+audio,
// the audio track (consistency.repeat.audio_*) — against the case's repeat thresholds, with or
// without ground truth. A request k that finishes before request 1 (concurrency) waits for
// it. It returns the checks to add to request k: none for request 1, nor for a case of one
// request; on a failure it draws the pictures into request k's artifact folder.
func (v *validator) repeat(ctx context.Context, c *suite.Case, srv *server, rr *results.RequestResult) []results.Check {
	if c.Repeat < 2 {
		return nil
	}
	if !suite.Enabled(c.Checks.Repeat) {
		if rr.Index == 1 {
			return nil
		}
		return []results.Check{checks.Skipped(checks.RepeatGroup, "disabled by the case's checks.repeat")}
	}
	first := v.cons.first(c.ID, srv)
	if rr.Index == 1 {
		first.finish(rr)
		return nil
	}
	if rr.Status == results.Cancelled {
		return nil
	}
	if !outputUsable(rr) {
		return []results.Check{
			checks.Skipped(checks.RepeatGroup, "not compared with request 1: this request has no valid output (see output.present and output.valid)"),
		}
	}
	select {
	case <-first.done:
	case <-ctx.Done():
		return []results.Check{checks.Skipped(checks.RepeatGroup, "not compared with request 1: the run was cancelled before request 1 finished")}
	}
	switch {
	case first.srv != srv:
		return []results.Check{checks.Skipped(checks.RepeatGroup, "not compared with request 1: it ran on another server start")}
	case first.path == "":
		return []results.Check{checks.Skipped(checks.RepeatGroup, "not compared with request 1: "+first.why)}
	}
	at := fmt.Sprintf("request %d/%d", rr.Index, rr.Of)
	out := rr.Output.Path
	res, err := first.cache.Files(ctx, first.path, out)
	var cs []results.Check
	var me *compare.MismatchError
	switch {
	case errors.As(err, &me):
		cs = checks.RepeatFailed(fmt.Sprintf("%s does not match request 1 (%s): %s", at, first.path, me.What), false)
	case err != nil:
		cs = []results.Check{checks.Errored(checks.RepeatGroup, fmt.Sprintf("compare %s with request 1: %v", at, err))}
	default:
		cs = checks.Repeat(frameScores(res), res.Frames, c.RepeatLimits)
	}
	// checks.audio: false turns off every audio check of the case, this one too.
	if c.Modality == suite.VideoAudio && suite.Enabled(c.Checks.Audio) {
		cs = append(cs, v.repeatAudio(ctx, c, first, out, at)...)
	}
	ev := checks.RepeatEvidenceOf(results.CaseResult{Requests: []results.RequestResult{{Index: rr.Index,
		Checks: append(rr.Checks[:len(rr.Checks):len(rr.Checks)], cs...)}}})[0]
	// Pictures of the pictures only: an audio drift alone has nothing to show in them.
	if err == nil && (failedIn(cs, checks.GroupRepeat, pictureRepeatChecks...) || failedIn(rr.Checks, checks.GroupConsistency)) {
		if perr := v.repeatPictures(ctx, c, rr, first, res, cs, ev); perr != nil {
			v.logf("%s %s: warning: cross-request picture: %v", c.ID, at, perr)
		}
	}
	return cs
}

// finish records request 1 as it finished and lets the later requests compare with it.
func (f *firstOutput) finish(rr *results.RequestResult) {
	f.finished.Do(func() { f.record(rr) })
}

// record keeps request 1's output, or why there is none to compare with, and closes done.
func (f *firstOutput) record(rr *results.RequestResult) {
	defer close(f.done)
	f.evidence = checks.RepeatEvidenceOf(results.CaseResult{Requests: []results.RequestResult{*rr}})[0]
	switch {
	case rr.Status == results.Cancelled:
		f.why = "request 1 was cancelled"
	case !outputUsable(rr):
		f.why = "request 1 has no valid output (see its output.present and output.valid)"
	default:
		f.path = rr.Output.Path
	}
}

// repeatAudio compares the audio track of request k's output with request 1's.
func (v *validator) repeatAudio(ctx context.Context, c *suite.Case, first *firstOutput, out, at string) []results.Check {
	a, err := first.cache.Audio(ctx, first.path, out)
	var me *compare.MismatchError
	switch {
	case errors.As(err, &me):
		return checks.RepeatFailed(fmt.Sprintf("the audio of %s does not match request 1's (%s): %v", at, first.path, me.What), true)
	case err != nil:
		return []results.Check{checks.Errored(checks.RepeatGroup, fmt.Sprintf("compare the audio of %s with request 1's: %v", at, err))}
	}
	return checks.RepeatAudio(a.Scores(), c.RepeatLimits)
}

// repeatPictures draws what a repeat or ground-truth failure of request k looks like across
// requests: request 1 | request k | SSIM map of the worst frame (when the repeat check
// failed), and the SSIM per frame of request k against request 1, and of request k and
// request 1 against the ground truth (when the case has one), headed by the diagnosis of
// the two requests (checks.DiagnoseRepeat).
func (v *validator) repeatPictures(ctx context.Context, c *suite.Case, rr *results.RequestResult, first *firstOutput, res compare.Result, cs []results.Check,
	ev checks.RepeatEvidence) error {
	dir, err := v.rec.ArtifactDir(c.ID, rr.Index, false)
	if err != nil {
		return err
	}
	k := strconv.Itoa(rr.Index)
	var lines []pictures.Line
	for _, ck := range cs {
		lines = append(lines, pictures.Line{Text: fmt.Sprintf("%s %s: %s", ck.Name, ck.Status, ck.Detail), Bad: ck.Status == results.Fail})
	}
	var errs []error
	if failedIn(cs, checks.GroupRepeat, pictureRepeatChecks...) {
		kind := baselines.GTImage
		if res.Kind == "video" {
			kind = baselines.GTVideo
		}
		ref, out, err := framesAt(ctx, v.cons.helpers.Tools, first.cache, baselines.GTEntry{Kind: kind, Path: first.path}, rr.Output.Path, res)
		if err == nil {
			m, mw, mh := metrics.SSIMMap(out.RGB, ref.RGB, out.W, out.H)
			title := fmt.Sprintf("%s request %d/%d against request 1", c.ID, rr.Index, rr.Of)
			if res.Kind == "video" {
				title += fmt.Sprintf(": frame %d of %d (lowest SSIM)", res.WorstFrame, res.Frames)
			}
			f := pictures.Failure{Title: title, Lines: append(lines, pictures.Line{Text: "request 1: " + first.path}),
				GT: ref, Out: out, SSIMMap: m, MapW: mw, MapH: mh, GTLabel: "request 1", OutLabel: "request " + k}
			path := filepath.Join(dir, pictures.RepeatFilePrefix+strconv.Itoa(res.WorstFrame)+".png")
			if err = pictures.Write(path, f); err == nil {
				err = recordPicture(v.rec, &rr.Pictures, results.Picture{Kind: results.PictureRepeat}, path)
			}
		}
		errs = append(errs, err)
	}
	curves := pictures.Curves{Title: fmt.Sprintf("%s request %d/%d: SSIM per frame", c.ID, rr.Index, rr.Of), Frames: max(res.Frames, 1),
		Series: []pictures.Series{{Label: "request " + k + " vs request 1", Points: points(res.PerFrame)}},
		Limits: []pictures.Limit{{Label: "repeat limit (consistency.repeat.ssim)", Y: c.RepeatLimits.SSIM}}}
	if d := checks.DiagnoseRepeat([]checks.RepeatEvidence{first.evidence, ev}); d.Text() != "" {
		curves.Lines = append(curves.Lines, pictures.Line{Text: d.Text(), Bad: true})
	}
	if e, lim, ok := v.groundTruthOf(c, rr); ok {
		gt := v.cons.cache(c.ID)
		mine, err := compareGT(ctx, gt, e, rr.Output.Path)
		first.gtOnce.Do(func() {
			if g, err := compareGT(ctx, gt, e, first.path); err == nil {
				first.gtFrames = g.PerFrame
			}
		})
		if err == nil {
			curves.Series = append(curves.Series, pictures.Series{Label: "request " + k + " vs ground truth", Points: points(mine.PerFrame)})
		}
		if first.gtFrames != nil {
			curves.Series = append(curves.Series, pictures.Series{Label: "request 1 vs ground truth", Points: points(first.gtFrames)})
		}
		curves.Limits = append(curves.Limits, pictures.Limit{Label: "ground-truth limit (consistency.ssim)", Y: lim})
		curves.Lines = append(curves.Lines, pictures.Line{Text: "ground truth: " + e.Path})
	} else {
		curves.Lines = append(curves.Lines, pictures.Line{Text: "no ground-truth comparison for this case: request 1 is the only reference"})
	}
	path := filepath.Join(dir, repeatPrefix+"ssim.png")
	err = pictures.WriteCurves(path, curves)
	if err == nil {
		err = recordPicture(v.rec, &rr.Pictures, results.Picture{Kind: results.PictureRepeatCurves}, path)
	}
	return errors.Join(append(errs, err)...)
}

// groundTruthOf is the pictures' ground truth of a case that compares with one (and its
// SSIM limit), as visualGT found it for the request; ok is false where there is none.
func (v *validator) groundTruthOf(c *suite.Case, rr *results.RequestResult) (e baselines.GTEntry, ssim float64, ok bool) {
	if v.cons.gt.Dir == "" || v.skipConsistency || v.mode == ModeGT || !suite.Enabled(c.Checks.Consistency) {
		return e, 0, false
	}
	e, err := v.cons.gt.Lookup(c.ID, c.NumGPUs, c.Modality != suite.Image, rr.Output.Format)
	if err != nil {
		return e, 0, false
	}
	return e, v.cons.thresholds.For(c.ID, e.Kind != baselines.GTImage).SSIM, true
}

// pictureRepeatChecks are the repeat checks of the pictures (not of the audio track).
var pictureRepeatChecks = []string{checks.RepeatSSIM, checks.RepeatPSNR, checks.RepeatMeanAbsDiff}

// failedIn reports whether a check of group failed in cs, among names when given.
func failedIn(cs []results.Check, group checks.Group, names ...string) bool {
	for _, c := range cs {
		if (c.Status == results.Fail || c.Status == results.Known) && checks.KindOf(c.Name).Group == group &&
			(len(names) == 0 || slices.Contains(names, c.Name)) {
			return true
		}
	}
	return false
}

// points is the SSIM of every compared frame, as a curve.
func points(frames []compare.Frame) []pictures.Point {
	out := make([]pictures.Point, len(frames))
	for i, f := range frames {
		out[i] = pictures.Point{X: f.Index, Y: f.SSIM}
	}
	return out
}
