package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/diffusion-check/diffusion-check/baselines"
	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/clip"
	"github.com/diffusion-check/diffusion-check/internal/compare"
	"github.com/diffusion-check/diffusion-check/internal/gitstore"
	"github.com/diffusion-check/diffusion-check/internal/media"
	"github.com/diffusion-check/diffusion-check/internal/metrics"
	"github.com/diffusion-check/diffusion-check/internal/pictures"
	"github.com/diffusion-check/diffusion-check/judge"
	"github.com/diffusion-check/diffusion-check/results"
	"github.com/diffusion-check/diffusion-check/suite"
)

// consistencyConfig is what the consistency and audio checks need, loaded once per run.
type consistencyConfig struct {
	helpers    compare.Helpers // how its comparisons run (validationHelpers)
	thresholds *baselines.Thresholds
	quality    *baselines.QualityThresholds // the suite's quality floors; nil: none
	qualityBy  *clip.Scorer                 // scores them; nil: none configured
	gt         baselines.GroundTruth
	store      *gitstore.Store // the pinned git store gt.Dir lies in (fetchStore); nil for a folder
	clip       *clip.Scorer
	gtMemory   int64 // bytes of decoded ground truth one case may keep

	mu     sync.Mutex
	caches map[string]*compare.Cache // by case id, while the case runs
	firsts map[string]*firstOutput   // request 1 of each case, while the case runs (repeat.go)
}

// cache returns the decoded ground truth of case id: every request of the case is compared
// with the same ground truth, decoded by the first comparison and kept for the others.
func (cc *consistencyConfig) cache(id string) *compare.Cache {
	if cc == nil {
		return nil // a run without consistency configuration keeps nothing
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.cacheLocked(id)
}

// cacheLocked is cache with cc.mu held.
func (cc *consistencyConfig) cacheLocked(id string) *compare.Cache {
	c := cc.caches[id]
	if c == nil {
		c = compare.NewCache(cc.gtMemory, cc.helpers)
		cc.caches[id] = c
	}
	return c
}

// dropCache frees the decoded ground truth of case id, and request 1's output that its later
// requests were compared with, once the case has ended.
func (cc *consistencyConfig) dropCache(id string) {
	cc.mu.Lock()
	delete(cc.caches, id)
	delete(cc.firsts, id)
	cc.mu.Unlock()
}

// loadConsistency reads the suite's thresholds (a file, or a folder with one file per GPU
// class). A broken thresholds file stops the run before anything starts.
func loadConsistency(opts Options) (*consistencyConfig, error) {
	th, err := opts.resolved().Thresholds(opts.Suite.Thresholds)
	if err != nil {
		return nil, err
	}
	mem := opts.GTMemory
	if mem == 0 {
		mem = compare.DefaultCacheBytes
	}
	gt := baselines.GroundTruth{Dir: opts.Suite.GroundTruth, Platform: opts.resolved().GroundTruthPlatform()}
	var quality *baselines.QualityThresholds
	if p := opts.Suite.QualityThresholds; p != "" {
		if quality, err = baselines.LoadQualityThresholds(p); err != nil {
			return nil, err
		}
	}
	return &consistencyConfig{helpers: validationHelpers(opts), thresholds: th, gt: gt, clip: nicedScorer(opts.CLIPScorer),
		quality: quality, qualityBy: nicedScorer(opts.QualityScorer), gtMemory: mem, caches: map[string]*compare.Cache{}, firsts: map[string]*firstOutput{}}, nil
}

// nicedScorer is a copy of scorer that runs at validationNice, as every helper of a
// validation; nil for none.
func nicedScorer(scorer *clip.Scorer) *clip.Scorer {
	if scorer == nil {
		return nil
	}
	niced := *scorer
	niced.Nice = validationNice
	return &niced
}

// Pictures of a consistency failure are saved in the request's artifact folder under this
// prefix and named in its record (results.Picture); the run's index.html lists them, and
// those of the repeat checks (repeatPrefix).
const picturePrefix = pictures.FilePrefix

// comparesWithGT says which of case c's groups are compared with ground truth: its pictures
// (checks.consistency) and, for a video+audio case, its audio track (checks.audio).
func comparesWithGT(c *suite.Case) (visual, audio bool) {
	return suite.Enabled(c.Checks.Consistency), c.Modality == suite.VideoAudio && suite.Enabled(c.Checks.Audio)
}

// consistency compares a request's output with the case's ground truth: the pictures
// (consistency.*) and, for a video+audio case, the audio track (audio.*), independently of
// each other. In gt mode it writes the ground truth instead.
func (v *validator) consistency(ctx context.Context, c *suite.Case, rr *results.RequestResult, dir string) []results.Check {
	if v.mode == ModeGT {
		return []results.Check{v.writeGroundTruth(ctx, c, rr, dir)}
	}
	withAudio := c.Modality == suite.VideoAudio
	doVisual, doAudio := comparesWithGT(c)
	var out []results.Check
	// notCompared marks the enabled groups with one status and detail each.
	notCompared := func(st results.Status, detail string) []results.Check {
		if doVisual {
			out = append(out, results.Check{Name: checks.ConsistencyGroup, Status: st, Detail: detail})
		}
		if doAudio {
			out = append(out, results.Check{Name: checks.AudioGroup, Status: st, Detail: detail})
		}
		return out
	}
	if !doVisual {
		out = append(out, checks.Skipped(checks.ConsistencyGroup, "disabled by the case's checks.consistency"))
	}
	if withAudio && !doAudio {
		out = append(out, checks.Skipped(checks.AudioGroup, "disabled by the case's checks.audio"))
	}
	if !doVisual && !doAudio {
		return out
	}
	if v.skipConsistency {
		return notCompared(results.Skip, "not compared: SGLANG_SKIP_CONSISTENCY=1 (SGLang's harness skips consistency then, as its AMD workflows set it)")
	}
	if !outputUsable(rr) {
		// output.present or output.valid already failed the request and says why.
		return notCompared(results.Skip, "not compared: the request has no valid output (see output.present and output.valid)")
	}
	if v.cons.gt.Dir == "" {
		return notCompared(results.Skip, "no ground truth: the suite names no ground_truth folder")
	}
	if doVisual {
		out = append(out, v.visualGT(ctx, c, rr, dir)...)
	}
	if doAudio {
		out = append(out, v.audio(ctx, c, rr)...)
	}
	return out
}

// visualGT finds the pictures' ground truth of a case and compares the output with it.
func (v *validator) visualGT(ctx context.Context, c *suite.Case, rr *results.RequestResult, dir string) []results.Check {
	video := c.Modality != suite.Image
	entry, err := v.cons.gt.Lookup(c.ID, c.NumGPUs, video, rr.Output.Format)
	if err != nil {
		return []results.Check{v.lookupFailed(checks.ConsistencyGroup, c, err)}
	}
	return noteGT(v.visual(ctx, c, rr, dir, entry), entry)
}

// noteGT adds to each check of a comparison a note naming the ground-truth file it used and
// its source (GTEntry.Note), so that results.json and the comment say which picture or track
// a verdict was made against. A skipped check (CLIP without a scorer) used none.
func noteGT(cs []results.Check, e baselines.GTEntry) []results.Check {
	for i := range cs {
		if cs[i].Status == results.Skip {
			continue
		}
		cs[i].Note = strings.TrimPrefix(cs[i].Note+"; ", "; ") + e.Note()
	}
	return cs
}

// lookupFailed is the check of group when the case's ground truth could not be found (the
// missing-GT verdict) or read (an error).
func (v *validator) lookupFailed(group string, c *suite.Case, err error) results.Check {
	var nf *baselines.NotFoundError
	if !errors.As(err, &nf) {
		return checks.Errored(group, err.Error())
	}
	st, detail := v.missingGT(c, nf)
	return results.Check{Name: group, Status: st, Detail: detail}
}

// missingGT is the verdict on a case without ground truth: SGLang fails it ("GT not found
// for <case>", _validate_consistency in test_server_common.py @ a7ec6b97f786), unless the
// case opts out with checks.ground_truth_required: false; a baseline run, which comes before the
// ground truth, only notes it.
func (v *validator) missingGT(c *suite.Case, nf *baselines.NotFoundError) (results.Status, string) {
	if !v.mode.requiresGroundTruth() {
		return results.Skip, nf.Error() + ": not compared in a " + v.mode.String() + " run; write it with run --mode gt"
	}
	if !suite.Enabled(c.Checks.GroundTruthRequired) {
		return results.Skip, nf.Error() + ": not compared (checks.ground_truth_required: false)"
	}
	return results.Fail, fmt.Sprintf(
		"GT not found for %s: %v; write it with run --mode gt, or set checks.ground_truth_required: false to skip the comparison", c.ID, nf)
}

// outputUsable reports whether the request saved an output that the output checks did not
// reject.
func outputUsable(rr *results.RequestResult) bool {
	if rr.Output == nil || rr.Output.Path == "" {
		return false
	}
	for _, ck := range rr.Checks {
		if (ck.Name == results.OutputPresent || ck.Name == results.OutputValid) && (ck.Status == results.Fail || ck.Status == results.Error) {
			return false
		}
	}
	return true
}

// visual compares the pictures: SSIM, PSNR and mean absolute difference on every frame (or
// SGLang's key frames), CLIP when a scorer is configured, and a failure picture.
func (v *validator) visual(ctx context.Context, c *suite.Case, rr *results.RequestResult, dir string, e baselines.GTEntry) []results.Check {
	gt := v.cons.cache(c.ID)
	res, err := compareGT(ctx, gt, e, rr.Output.Path)
	var me *compare.MismatchError
	switch {
	case errors.As(err, &me):
		d := me.Error()
		return []results.Check{
			checks.Failed(checks.ConsistencySSIM, d),
			checks.Failed(checks.ConsistencyPSNR, d),
			checks.Failed(checks.ConsistencyMeanAbsDiff, d),
		}
	case err != nil:
		return []results.Check{checks.Errored(checks.ConsistencyGroup, fmt.Sprintf("compare with ground truth: %v", err))}
	}
	lim := v.cons.thresholds.For(c.ID, e.Kind != baselines.GTImage)
	cs := checks.Consistency(frameScores(res), res.Frames, lim)
	cs = append(cs, v.clipCheck(ctx, gt, rr, dir, e, res, lim))
	if judge.RequestStatus(cs) == results.Fail {
		if err := v.failurePicture(ctx, gt, c, rr, dir, e, res, cs); err != nil {
			v.logf("%s request %d/%d: warning: failure picture: %v", c.ID, rr.Index, rr.Of, err)
		}
	}
	return cs
}

// frameScores is the metrics of every compared frame, as the verdicts take them.
func frameScores(res compare.Result) []checks.FrameScore {
	frames := make([]checks.FrameScore, len(res.PerFrame))
	for i, f := range res.PerFrame {
		frames[i] = checks.FrameScore{Index: f.Index, SSIM: f.SSIM, PSNR: f.PSNR, MeanAbsDiff: f.MeanAbsDiff}
	}
	return frames
}

// compareGT compares an output with the ground truth e (decoded once in gt): an image, a
// whole video, or SGLang's key frames.
func compareGT(ctx context.Context, gt *compare.Cache, e baselines.GTEntry, out string) (compare.Result, error) {
	switch e.Kind {
	case baselines.GTImage:
		return gt.Images(ctx, e.Path, out)
	case baselines.GTVideo:
		return gt.Videos(ctx, e.Path, out)
	case baselines.GTKeyFrames:
		return gt.KeyFrames(ctx, map[int]string{
			compare.FrameFirst: e.KeyFrames[0], compare.FrameMid: e.KeyFrames[1], compare.FrameLast: e.KeyFrames[2],
		}, out)
	}
	return compare.Result{}, fmt.Errorf("ground truth %s: unknown kind %v", e.Path, e.Kind)
}

// clipCheck scores the compared frames with the configured CLIP scorer: the image, or the key
// frames 0, N//2 and N−1 of a video (extracted as PNGs beside the output).
func (v *validator) clipCheck(ctx context.Context, gt *compare.Cache, rr *results.RequestResult, dir string, e baselines.GTEntry, res compare.Result,
	lim checks.ConsistencyLimits) results.Check {
	if v.cons.clip == nil {
		c := checks.Skipped(checks.ConsistencyCLIP, "no CLIP scorer configured (run --clip-scorer CMD or DIFFUSION_CHECK_CLIP_SCORER; see docs/consistency.md)")
		c.Cause = checks.CLIPNotEnforced
		return c
	}
	fail := func(err error) results.Check {
		return results.Check{Name: checks.ConsistencyCLIP, Status: results.Fail, Limit: checks.Float(lim.CLIP),
			Detail: fmt.Sprintf("threshold ≥ %g configured, but no score: %v", lim.CLIP, err)}
	}
	var pairs []clip.Pair
	var idx []int
	switch e.Kind {
	case baselines.GTImage:
		pairs, idx = []clip.Pair{{Output: abs(rr.Output.Path), GroundTruth: abs(e.Path)}}, []int{0}
	default:
		for k, i := range baselines.KeyFrameIndices(res.Frames) {
			o, err := v.savedFrame(ctx, gt, rr.Output.Path, i, filepath.Join(dir, fmt.Sprintf("clip-output-frame-%d.png", i)))
			if err != nil {
				return fail(err)
			}
			g := e.KeyFrames[k]
			if e.Kind == baselines.GTVideo {
				if g, err = v.savedFrame(ctx, gt, e.Path, i, filepath.Join(dir, fmt.Sprintf("clip-ground-truth-frame-%d.png", i))); err != nil {
					return fail(err)
				}
			}
			pairs = append(pairs, clip.Pair{Output: abs(o), GroundTruth: abs(g)})
			idx = append(idx, i)
		}
	}
	scores, err := v.cons.clip.Score(ctx, pairs)
	if err != nil {
		return fail(err)
	}
	return checks.CLIP(scores, idx, res.Frames, lim)
}

func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// savedFrame writes frame i of a video as a PNG at dst and returns dst; from the cache when
// it holds the video decoded (a nil cache decodes it).
func (v *validator) savedFrame(ctx context.Context, cache *compare.Cache, video string, i int, dst string) (string, error) {
	rgb, w, h, err := cache.FrameAt(ctx, video, i)
	if err != nil {
		return "", err
	}
	b, err := media.EncodePNG(rgbImage(rgb, w, h))
	if err != nil {
		return "", err
	}
	return dst, os.WriteFile(dst, b, 0o644)
}

func rgbImage(rgb []byte, w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i, j := 0, 0; i+2 < len(rgb) && j+3 < len(img.Pix); i, j = i+3, j+4 {
		img.Pix[j], img.Pix[j+1], img.Pix[j+2], img.Pix[j+3] = rgb[i], rgb[i+1], rgb[i+2], 255
	}
	return img
}

// failurePicture draws the worst frame (lowest SSIM): ground truth | output | SSIM map, with
// the metric values, into the request's artifact folder.
func (v *validator) failurePicture(ctx context.Context, cache *compare.Cache, c *suite.Case, rr *results.RequestResult, dir string, e baselines.GTEntry,
	res compare.Result, cs []results.Check) error {
	k := res.WorstFrame
	gt, out, err := framesAt(ctx, v.cons.helpers.Tools, cache, e, rr.Output.Path, res)
	if err != nil {
		return err
	}
	m, mw, mh := metrics.SSIMMap(out.RGB, gt.RGB, out.W, out.H)
	title := fmt.Sprintf("%s request %d/%d", c.ID, rr.Index, rr.Of)
	if res.Kind == "video" {
		title += fmt.Sprintf(": frame %d of %d (lowest SSIM)", k, res.Frames)
	}
	f := pictures.Failure{Title: title, GT: gt, Out: out, SSIMMap: m, MapW: mw, MapH: mh}
	for _, ck := range cs {
		f.Lines = append(f.Lines, pictures.Line{Text: fmt.Sprintf("%s %s: %s", ck.Name, ck.Status, ck.Detail), Bad: ck.Status == results.Fail})
	}
	src := e.Path
	if e.Kind == baselines.GTKeyFrames {
		src = strings.Join(e.KeyFrames[:], ", ")
	}
	f.Lines = append(f.Lines, pictures.Line{Text: "ground truth: " + src})
	path := filepath.Join(dir, picturePrefix+strconv.Itoa(k)+".png")
	if err := pictures.Write(path, f); err != nil {
		return err
	}
	return recordPicture(v.rec, &rr.Pictures, results.Picture{Kind: results.PictureConsistency}, path)
}

// recordPicture adds p, drawn into path under the output folder, to pics: the record names
// every picture the run drew (results.Picture), so that publish, report and the failure index
// read it there.
func recordPicture(rec *results.Writer, pics *[]results.Picture, p results.Picture, path string) error {
	rel, err := rec.Rel(path)
	if err != nil {
		return err
	}
	p.Path = rel
	*pics = append(*pics, p)
	return nil
}

// framesAt decodes the worst frame of a comparison (res.WorstFrame) on both sides: the
// reference e (through cache when it holds it) and the output at path, images with tools.
func framesAt(ctx context.Context, tools media.Tools, cache *compare.Cache, e baselines.GTEntry, path string,
	res compare.Result) (gt, out pictures.Frame, err error) {
	k := res.WorstFrame
	switch e.Kind {
	case baselines.GTImage:
		gt.RGB, gt.W, gt.H, err = tools.DecodeImage(ctx, e.Path)
		if err == nil {
			out.RGB, out.W, out.H, err = tools.DecodeImage(ctx, path)
		}
	case baselines.GTVideo:
		gt.RGB, gt.W, gt.H, err = cache.FrameAt(ctx, e.Path, k)
		if err == nil {
			out.RGB, out.W, out.H, err = cache.FrameAt(ctx, path, k)
		}
	case baselines.GTKeyFrames:
		slot := 0
		for s, i := range baselines.KeyFrameIndices(res.Frames) {
			if i == k {
				slot = s
			}
		}
		gt.RGB, gt.W, gt.H, err = tools.DecodeImage(ctx, e.KeyFrames[slot])
		if err == nil {
			out.RGB, out.W, out.H, err = cache.FrameAt(ctx, path, k)
		}
	}
	return gt, out, err
}

// audio compares the output's audio track with the case's audio ground truth, SGLang's
// {stem}_audio.wav (_validate_audio_consistency in test_server_common.py), whatever holds the
// pictures' ground truth: a whole video, key frames or nothing.
func (v *validator) audio(ctx context.Context, c *suite.Case, rr *results.RequestResult) []results.Check {
	gt, err := v.cons.gt.LookupAudio(c.ID, c.NumGPUs)
	if err != nil {
		return []results.Check{v.lookupFailed(checks.AudioGroup, c, err)}
	}
	return noteGT(v.compareAudio(ctx, c, rr, gt), gt)
}

// compareAudio compares the output's audio track with its ground truth gt.
func (v *validator) compareAudio(ctx context.Context, c *suite.Case, rr *results.RequestResult, gt baselines.GTEntry) []results.Check {
	res, err := v.cons.cache(c.ID).Audio(ctx, gt.Path, rr.Output.Path)
	var me *compare.MismatchError
	switch {
	case errors.As(err, &me):
		return checks.AudioFailed(me.Error())
	case errors.Is(err, media.ErrGTWAV):
		return []results.Check{checks.Errored(checks.AudioGroup, fmt.Sprintf("%v: regenerate the case's ground truth (run --mode gt)", err))}
	case err != nil:
		return []results.Check{checks.Errored(checks.AudioGroup, fmt.Sprintf("compare audio with ground truth: %v", err))}
	}
	return checks.AudioConsistency(res.Scores(), v.cons.thresholds.AudioFor(c.ID))
}

// writeGroundTruth stores request 1's output as the case's ground truth: the image, or the
// whole video plus SGLang's three key-frame PNGs, plus for a video+audio case SGLang's audio
// ground truth {stem}_audio.wav (encode_audio_gt_wav of the decoded track, as
// test_server_common.py saves it). It never overwrites silently: every file is reported as new,
// unchanged, or changed with its SSIM (audio: spectral similarity) against the file it replaced.
func (v *validator) writeGroundTruth(ctx context.Context, c *suite.Case, rr *results.RequestResult, dir string) results.Check {
	name := checks.GroundTruthWrite
	switch {
	case rr.Index != 1:
		return checks.Skipped(name, "the ground truth is written from request 1")
	case v.cons.gt.Dir == "":
		return checks.Errored(name, "--mode gt: the suite names no ground_truth folder to write to")
	case !outputUsable(rr):
		return checks.Failed(name, "request 1 has no valid output to write as ground truth")
	}
	type file struct{ name, src string }
	var files []file
	if c.Modality == suite.Image {
		files = append(files, file{baselines.ImageName(c.ID, c.NumGPUs, rr.Output.Format), rr.Output.Path})
	} else {
		// A realtime case's ground truth is the three key frames alone, as SGLang's
		// _save_gt_output saves them from the raw websocket frames (test_server_common.py,
		// 2026-08-20); its lossless Matroska output is no {id}_{n}gpu.mp4.
		if c.Realtime == nil {
			files = append(files, file{baselines.VideoName(c.ID, c.NumGPUs), rr.Output.Path})
		}
		names := baselines.KeyFrameNames(c.ID, c.NumGPUs)
		for k, i := range baselines.KeyFrameIndices(rr.Output.Frames) {
			src, err := v.savedFrame(ctx, v.cons.cache(c.ID), rr.Output.Path, i,
				filepath.Join(dir, "ground-truth-"+strings.TrimPrefix(names[k], baselines.Stem(c.ID, c.NumGPUs)+"_")))
			if err != nil {
				return checks.Errored(name, fmt.Sprintf("extract key frame %d: %v", i, err))
			}
			files = append(files, file{names[k], src})
		}
	}
	if c.Modality == suite.VideoAudio {
		src := filepath.Join(dir, "ground-truth-audio.wav")
		if err := writeAudioGT(ctx, v.cons.helpers.Tools, v.cons.cache(c.ID), rr.Output, src); err != nil {
			return checks.Errored(name, err.Error())
		}
		files = append(files, file{baselines.AudioName(c.ID, c.NumGPUs), src})
	}
	var report []string
	for _, f := range files {
		data, err := os.ReadFile(f.src)
		if err != nil {
			return checks.Errored(name, err.Error())
		}
		old := v.cons.gt.Path(f.name)
		change := ""
		if prev, err := os.ReadFile(old); err == nil && !bytes.Equal(prev, data) {
			change = v.changeVersusOld(ctx, old, f.src)
		}
		state, err := v.cons.gt.Put(f.name, data)
		if err != nil {
			return checks.Errored(name, err.Error())
		}
		line := fmt.Sprintf("%s %s", state, v.cons.gt.Path(f.name))
		if state == baselines.PutChanged {
			line += " (" + change + ")"
		}
		v.logf("%s: ground truth: %s", c.ID, line)
		report = append(report, line)
	}
	return checks.Passed(name, strings.Join(report, "; "))
}

// writeAudioGT writes the audio ground truth of an output as SGLang does: its track decoded
// by extract_audio_pcm (the output check's decode, when decoded kept it), encoded by
// encode_audio_gt_wav.
func writeAudioGT(ctx context.Context, tools media.Tools, decoded *compare.Cache, o *results.Output, dst string) error {
	var pcm media.PCM
	var err error
	if o.Audio != nil {
		pcm, err = decoded.OutputAudio(ctx, o.Path, o.Audio.Channels)
	} else {
		pcm, err = tools.DecodeAudio(ctx, o.Path) // says there is none, naming the file
	}
	if err != nil {
		return fmt.Errorf("audio ground truth: %w", err)
	}
	b, err := media.EncodeGTWAV(pcm.Samples)
	if err != nil {
		return fmt.Errorf("audio ground truth of %s: %w", o.Path, err)
	}
	return os.WriteFile(dst, b, 0o644)
}

// changeVersusOld describes how a new ground-truth file differs from the one it replaces.
func (v *validator) changeVersusOld(ctx context.Context, old, src string) string {
	if compare.IsGTWAV(old) {
		a, err := compare.Audio(ctx, old, src)
		if err != nil {
			return fmt.Sprintf("not comparable with the old file: %v", err)
		}
		return fmt.Sprintf("audio vs the old file: spectral similarity %.4f, waveform correlation %.4f", a.SpectralSimilarity, a.WaveformCorrelation)
	}
	var res compare.Result
	var err error
	if strings.HasSuffix(old, ".mp4") {
		res, err = compare.Videos(ctx, old, src)
	} else {
		res, err = compare.Images(ctx, old, src)
	}
	if err != nil {
		return fmt.Sprintf("not comparable with the old file: %v", err)
	}
	if res.Kind == "video" {
		return fmt.Sprintf("min SSIM vs the old file %.4f at frame %d of %d", res.MinSSIM, res.WorstFrame, res.Frames)
	}
	return fmt.Sprintf("SSIM vs the old file %.4f", res.MinSSIM)
}

// failureIndex writes artifacts/index.html under out with the failure pictures of every
// request that has some, beside what failed. Nothing is written when no request has pictures.
func failureIndex(out string, res *results.Result, logf func(format string, args ...any)) {
	root := filepath.Join(out, results.ArtifactsDir)
	var entries []pictures.Entry
	for _, cr := range res.Cases {
		for _, rr := range cr.Requests {
			// The request's consistency pictures, as its record names them, relative to
			// artifacts/ where the index lies, in the order of their names.
			var pics []string
			for _, p := range rr.Pictures {
				if p.Kind != results.PictureMemory {
					pics = append(pics, strings.TrimPrefix(p.Path, results.ArtifactsDir+"/"))
				}
			}
			if len(pics) == 0 {
				continue
			}
			slices.Sort(pics)
			e := pictures.Entry{Case: cr.ID, Index: rr.Index, Of: rr.Of, Pictures: pics}
			for _, ck := range rr.Checks {
				if ck.Status == results.Fail || ck.Status == results.Error {
					e.Lines = append(e.Lines, fmt.Sprintf("%s %s: %s", ck.Name, ck.Status, ck.Detail))
				}
			}
			entries = append(entries, e)
		}
	}
	if len(entries) == 0 {
		return
	}
	path := filepath.Join(root, "index.html")
	if err := pictures.WriteIndex(path, "Consistency failures: "+res.Suite, entries); err != nil {
		logf("warning: %v", err)
		return
	}
	logf("consistency failure pictures: %s", path)
}
