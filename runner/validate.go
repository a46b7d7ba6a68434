package runner

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"slices"
	"strings"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/compare"
	"github.com/diffusion-check/diffusion-check/internal/media"
	"github.com/diffusion-check/diffusion-check/internal/proc"
	"github.com/diffusion-check/diffusion-check/results"
	"github.com/diffusion-check/diffusion-check/suite"
)

// validator is the second phase of a request (validate), which needs only its output files,
// not the server. It holds what that takes: the run's consistency data and decode caches,
// whose helpers (cons.helpers: ffmpeg, ffprobe, the metric) run below the server's priority
// on a bounded number of threads, how an image is probed, the run's mode, and the writer that
// places the pictures it draws.
type validator struct {
	cons *consistencyConfig
	mode Mode
	// skipConsistency: SGLANG_SKIP_CONSISTENCY=1, the ground-truth comparison is skipped.
	skipConsistency bool
	probe           prober // cons.helpers.Tools.Probe; a test's may wait
	rec             *results.Writer
	logf            func(format string, args ...any)
}

// newValidator is the validator of a run with opts, its data and caches in cons, drawing into
// rec.
func newValidator(opts Options, cons *consistencyConfig, rec *results.Writer, logf func(format string, args ...any)) *validator {
	return &validator{cons: cons, mode: opts.Mode, skipConsistency: opts.SkipConsistency, probe: cons.helpers.Tools.Probe,
		rec: rec, logf: logf}
}

// validate is the second phase of request m of case c: the output check (present,
// decodable, of the declared shape), the comparison with the ground truth (consistency.go;
// in gt mode, writing it) and, for the case's own requests, the comparison with request 1
// (consistency.repeat, repeat.go); then the output's decoded frames leave the case's cache.
// A confirmation request gets the output check alone: it is sent to re-measure perf and
// memory, and its output was compared N times already. It returns the request with its
// output described, its pictures named and every check: its sending's, validation's, what
// the server reported, the repeat checks.
//
// A validation that the run's cancel keeps from finishing is recorded as cancelled
// (validationCancelled), with everything measure measured.
func (v *validator) validate(ctx context.Context, c *suite.Case, m measured) results.RequestResult {
	if m.rr.Status == results.Cancelled {
		return m.unvalidated()
	}
	if ctx.Err() != nil {
		return validationCancelled(m)
	}
	rr := m.rr
	var found []results.Check
	if m.answered {
		// The output check decodes a video once, for everything: its frame count and shape,
		// and (kept in the case's cache until forgetOutput) the frames and audio track the
		// consistency and repeat checks compare. A confirmation request keeps nothing.
		var decoded *compare.Cache
		if !rr.Confirm {
			decoded = v.cons.cache(c.ID)
		}
		if c.RevisedPrompt {
			found = append(found, checks.RevisedPrompt(c.Request.Prompt, m.rep.RevisedPrompts))
		}
		if c.Modality == suite.Text {
			// SGLang's chat smoke is the whole of a text case: no media to check or compare.
			if m.rep.Chat != nil {
				found = append(found, checks.ChatCompletion(*m.rep.Chat))
			}
		} else {
			found = append(found, v.output(ctx, c, m.rep, m.dir, &rr, decoded)...)
		}
		if !rr.Confirm && c.Modality != suite.Text {
			found = append(found, v.consistency(ctx, c, &rr, m.dir)...)
			found = append(found, v.quality(ctx, c, m.rep, &rr)...)
		}
	}
	rr.Checks = slices.Concat(m.rr.Checks, found, m.reported)
	if !rr.Confirm && c.Modality != suite.Text {
		rr.Checks = append(rr.Checks, v.repeat(ctx, c, m.srv, &rr)...)
		v.forgetOutput(c, &rr)
	}
	if ctx.Err() != nil {
		return validationCancelled(m) // what it found may rest on decodes the cancel cut short
	}
	return rr
}

// validationNice is how much lower than the run's (and so its servers') scheduling priority
// the helpers of a validation run (ffmpeg, ffprobe, the CLIP scorer) and its metric's
// threads: work beside a request in flight (validationHelpers).
const validationNice proc.Nice = 10

// validationHelpers is how a validation runs its decoders and metric: the run's ffmpeg at
// validationNice, its metric and each decoder on at most validationThreads threads.
func validationHelpers(opts Options) compare.Helpers {
	return compare.Helpers{Tools: opts.Tools.Niced(validationNice), Threads: validationThreads(opts)}
}

// validationThreads is Options.ValidationThreads, else the suite's validation_threads, else
// half the cores (at least one): the other half stays with the server.
func validationThreads(opts Options) int {
	switch {
	case opts.ValidationThreads > 0:
		return opts.ValidationThreads
	case opts.Suite != nil && opts.Suite.ValidationThreads > 0:
		return opts.Suite.ValidationThreads
	}
	return max(1, runtime.GOMAXPROCS(0)/2)
}

// validationCancelled is a measured request whose validation the run's cancel kept from
// finishing: cancelled, with its measurements (timings, perf record, memory) kept. A request
// the cancel cut short while it was measured is as measured: its checks say so.
func validationCancelled(m measured) results.RequestResult {
	rr := m.unvalidated()
	if rr.Status == results.Cancelled {
		return rr
	}
	rr.Status = results.Cancelled
	rr.Checks = append(rr.Checks, results.Check{Name: results.OutputValid, Status: results.Cancelled,
		Detail: "run cancelled before the output was validated (output, consistency and repeat checks); what the request measured is kept"})
	return rr
}

// outputProblem checks the output of a side generation (a LoRA check's, the batching smoke's)
// as output does, and says the first of its checks that failed or errored ("its output:
// <check> <status>: <detail's first line>"); "" when none did.
func (v *validator) outputProblem(ctx context.Context, c *suite.Case, rep reply, dir string, rr *results.RequestResult) string {
	for _, ck := range v.output(ctx, c, rep, dir, rr, nil) {
		if ck.Status == results.Fail || ck.Status == results.Error {
			d, _, _ := strings.Cut(ck.Detail, "\n")
			return fmt.Sprintf("its output: %s %s: %s", ck.Name, ck.Status, d)
		}
	}
	return ""
}

// output saves the media and checks that it is there and has the declared shape. A video is
// decoded once (compare.Cache.Output: its frames counted, no ffprobe -count_frames decode), its
// frames and audio track kept in decoded for the comparisons that follow (nil: not kept).
func (v *validator) output(ctx context.Context, c *suite.Case, rep reply, dir string, rr *results.RequestResult, decoded *compare.Cache) []results.Check {
	var out []results.Check
	want := max(c.Request.N, 1)
	if c.Modality != suite.Image {
		want = 1
	}
	if len(rep.Files) == 0 {
		return append(out, results.Check{Name: results.OutputPresent, Status: results.Fail,
			Detail: fmt.Sprintf("the server reported success but returned no media (0 bytes, request_id %s)", rep.ID)})
	}
	var paths []string
	for _, f := range rep.Files {
		paths = append(paths, f.Path)
	}
	kind := "image"
	if c.Modality != suite.Image {
		kind = "video"
	}
	rr.Output = &results.Output{Kind: kind, Path: paths[0], Format: rep.Ext, Bytes: rep.Files[0].Bytes}
	if len(rep.Files) != want {
		out = append(out, results.Check{Name: results.OutputPresent, Status: results.Fail,
			Detail: fmt.Sprintf("asked for %d images, got %d", want, len(rep.Files))})
	} else {
		out = append(out, results.Check{Name: results.OutputPresent, Status: results.Pass, Value: checks.Float(float64(rep.Files[0].Bytes)), Unit: "bytes"})
	}
	if !suite.Enabled(c.Checks.Output) {
		return append(out, results.Check{Name: results.OutputValid, Status: results.Skip, Detail: "disabled by the case's checks.output"})
	}
	var problems []string
	for k, p := range paths {
		var info media.Info
		var err error
		if c.Modality == suite.Image {
			if hp, w, h := headerShapeProblems(c, p); len(hp) > 0 {
				if k == 0 {
					rr.Output.Width, rr.Output.Height = w, h
				}
				for _, q := range hp {
					problems = append(problems, q+" (read from its header; not decoded)")
				}
				continue
			}
			info, err = v.probe(ctx, p)
		} else {
			info, err = decoded.Output(ctx, p)
		}
		if err != nil {
			st := results.Fail
			if errors.Is(err, exec.ErrNotFound) {
				st = results.Error // no ffprobe: we could not check, the output is not known bad
			}
			return append(out, results.Check{Name: results.OutputValid, Status: st, Detail: fmt.Sprintf("output is not decodable: %v", err)})
		}
		if k == 0 {
			fillOutput(rr.Output, info)
		}
		problems = append(problems, shapeProblems(c, info)...)
		if c.Modality == suite.VideoAudio && info.Audio != nil {
			track, err := decoded.OutputAudioTrack(ctx, p, info.Audio)
			if err != nil {
				st := results.Fail // SGLang's extract_audio_pcm fails the request too
				if errors.Is(err, exec.ErrNotFound) {
					st = results.Error
				}
				return append(out, results.Check{Name: results.OutputValid, Status: st, Detail: fmt.Sprintf("the audio track does not decode: %v", err)})
			}
			if problem := checks.AudioOutputProblem(track); problem != "" {
				problems = append(problems, problem)
			}
		}
	}
	if len(problems) > 0 {
		return append(out, results.Check{Name: results.OutputValid, Status: results.Fail,
			Detail: strings.Join(problems, "; ")})
	}
	return append(out, results.Check{Name: results.OutputValid, Status: results.Pass, Detail: describe(rr.Output)})
}

func fillOutput(o *results.Output, info media.Info) {
	o.Width, o.Height = info.Width, info.Height
	if o.Kind == "video" {
		o.Frames, o.FPS, o.DurationS = info.Frames, info.FPS, info.DurationS
	}
	if a := info.Audio; a != nil {
		o.Audio = &results.Audio{Codec: a.Codec, SampleRate: a.SampleRate, Channels: a.Channels, DurationS: a.DurationS}
	}
}

// shapeProblems compares what was decoded with what the case asked for: the size and frame
// count of SGLang's rule (checks.ExpectedShape: upscaling multiplies the size, frame
// interpolation sets the frame count, no other frame count is checked), the image codec of the
// output format, at least one video frame and, for video+audio, an audio track.
func shapeProblems(c *suite.Case, info media.Info) []string {
	r := c.Request
	shape, err := checks.ExpectedShape(checks.ShapeRequest{Width: r.Width, Height: r.Height, Video: c.Modality != suite.Image,
		Edit: len(r.Images) > 0, ImageToVideo: r.InputReference != "", NumFrames: r.NumFrames, Extra: r.Extra})
	if err != nil {
		return []string{fmt.Sprintf("case %s: %v", c.ID, err)}
	}
	p := shape.Problems(info.Width, info.Height, info.Frames)
	if c.Modality == suite.Image {
		if want := imageCodec(r.OutputFormat); want != "" && info.Codec != want {
			p = append(p, fmt.Sprintf("image codec %s, want %s for output_format %s", info.Codec, want, r.OutputFormat))
		}
		return p
	}
	if info.Frames < 1 {
		p = append(p, "no decodable video frames")
	}
	if c.Modality == suite.VideoAudio && info.Audio == nil {
		p = append(p, "no audio track, want one for modality video+audio")
	}
	return p
}

func imageCodec(format string) string {
	switch format {
	case "png":
		return "png"
	case "jpeg":
		return "mjpeg"
	case "webp":
		return "webp"
	}
	return ""
}

func describe(o *results.Output) string {
	s := fmt.Sprintf("%s %dx%d", o.Format, o.Width, o.Height)
	if o.Kind == "video" {
		s += fmt.Sprintf(", %d frames at %g fps", o.Frames, o.FPS)
	}
	if o.Audio != nil {
		s += fmt.Sprintf(", audio %s %d Hz", o.Audio.Codec, o.Audio.SampleRate)
	}
	return s
}
