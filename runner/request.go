package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/diffusion-check/diffusion-check/baselines"
	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/compare"
	"github.com/diffusion-check/diffusion-check/internal/media"
	"github.com/diffusion-check/diffusion-check/suite"
)

// Prober reads what a media file holds.
type Prober func(ctx context.Context, path string) (media.Info, error)

// settleTime is how long a failed request waits for a dying server to finish exiting, so that
// the failure is attributed to the crash rather than to a reset connection.
const settleTime = 500 * time.Millisecond

// startPeaks are the peaks of a server start that the server reports with each request: its
// load peak and its warm-up peak (nil when not reported).
type startPeaks struct{ load, warmup map[string]float64 }

// slot names one request of a case: one of its Repeat requests, or a confirmation request
// (confirm set), each 1-based index of of.
type slot struct {
	index, of int
	confirm   bool
}

// String is how progress lines and messages name the request: "request 2/3",
// "confirmation request 1/2".
func (s slot) String() string {
	if s.confirm {
		return fmt.Sprintf("confirmation request %d/%d", s.index, s.of)
	}
	return fmt.Sprintf("request %d/%d", s.index, s.of)
}

// measured is one request as its measurement left it, before its judgement (judge.Input):
// the result with the checks made while measuring, the peaks of the server start the server
// reported with it, whether the server answered with an output (its timings are then
// judged) and, when the server can no longer be used, why.
type measured struct {
	rr       checks.RequestResult
	starts   startPeaks
	answered bool
	halt     string
}

// request sends one request of a case and measures it: the checks made while measuring
// (server alive, output, consistency, perf record), not yet its perf and memory verdicts,
// which judge makes (r.judged). A confirmation request is measured as any other except for
// consistency with the ground truth: it is sent to re-measure perf and memory, and its output
// was checked N times already.
func (r *run) request(ctx context.Context, c *suite.Case, srv *server, at slot) measured {
	rr, loadPeak, answered, halt := r.measure(ctx, c, srv, at)
	return measured{rr: rr, starts: loadPeak, answered: answered, halt: halt}
}

// measure is request with its results apart; answered is whether the server answered.
func (r *run) measure(ctx context.Context, c *suite.Case, srv *server, at slot) (rr checks.RequestResult, loadPeak startPeaks, answered bool, halt string) {
	rr = checks.RequestResult{Case: c.ID, Index: at.index, Of: at.of, Confirm: at.confirm, StartedAt: time.Now().UTC()}
	spec := r.opts.Suite.Servers[c.Server]
	dir, err := r.rec.ArtifactDir(c.ID, at.index, at.confirm)
	if err != nil {
		r.noteDisk(err)
		rr.Checks = append(rr.Checks, checks.Check{Name: checks.OutputPresent, Status: checks.Error, Detail: err.Error()})
		return rr, startPeaks{}, false, ""
	}
	timeout := spec.RequestTimeout
	if c.Timeout > 0 {
		timeout = c.Timeout
	}
	cl := &client{http: r.opts.HTTPClient, base: srv.baseURL, model: spec.Model, poll: spec.PollInterval,
		dir: dir, maxBytes: int64(spec.MaxOutputMB) << 20}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	mem := srv.openRequestMemory()
	stopBeat := r.beat(fmt.Sprintf("%s %s: waiting", c.ID, at), timeout, func() string { return requestStatus(cl, srv) })
	rep, t0, err := srv.generate(rctx, cl, c)
	stopBeat()
	rr.E2EMs = ms(time.Since(t0))
	mem.end()
	defer func() { mem.record(&rr) }() // after joinPerf, beside the server's own numbers
	timedOut := errors.Is(rctx.Err(), context.DeadlineExceeded)
	cancel()
	rr.RequestID = rep.ID
	rr.RealtimeChunks = rep.Chunks

	if err != nil {
		if ctx.Err() != nil {
			rr.Status = checks.Cancelled
			rr.Checks = append(rr.Checks, checks.Check{Name: checks.ServerAlive, Status: checks.Cancelled,
				Detail: fmt.Sprintf("run cancelled after %.0f ms, before the output arrived", rr.E2EMs)})
			return rr, startPeaks{}, false, "run cancelled"
		}
		srv.settle(settleTime)
		if why := srv.dead(); why != "" {
			detail := fmt.Sprintf("%s while the request was in flight (%v)", why, err)
			rr.Checks = append(rr.Checks, checks.Check{Name: checks.ServerAlive, Status: checks.Fail, Detail: withTail(detail, srv), Cause: srv.crashCause("server crashed")})
			saveTail(dir, srv)
			return rr, startPeaks{}, false, fmt.Sprintf("not sent: the server died during %s", at)
		}
		rr.Checks = append(rr.Checks, checks.Check{Name: checks.ServerAlive, Status: checks.Pass})
		if timedOut && c.Modality != suite.Image && baselines.ROCm(r.opts.GPU) {
			rr.Checks = append(rr.Checks, checks.AMDVideoTimeout(c.ID, timeout))
			saveTail(dir, srv)
			return rr, startPeaks{}, false, fmt.Sprintf("not sent: %s", checks.AMDVideoTimeoutCause)
		}
		if timedOut {
			rr.Checks = append(rr.Checks, checks.Check{Name: checks.OutputPresent, Status: checks.Fail,
				Detail: fmt.Sprintf("no complete output within the request timeout of %s (server alive but not answering)", timeout),
				Cause:  fmt.Sprintf("request hung: no output within %s", timeout)})
			saveTail(dir, srv)
			return rr, startPeaks{}, false, fmt.Sprintf("not sent: the server was stopped after %s hung", at)
		}
		st := checks.Fail
		var se *saveError
		if errors.As(err, &se) {
			st = checks.Error // the output arrived; this machine could not keep it
			r.noteDisk(err)
		}
		rr.Checks = append(rr.Checks, checks.Check{Name: checks.OutputPresent, Status: st, Detail: err.Error()})
		saveTail(dir, srv)
		switch {
		case failedOnServer(err):
			// SGLang writes no performance.log record for a request it reports failed
			// (gpu_worker._execute_forward_common): waiting for one would only add
			// perf_record_timeout and a second failure to the one above.
			rr.Checks = append(rr.Checks, checks.Check{Name: checks.PerfRecord, Status: checks.Skip,
				Detail: "not joined: the server reported this request failed, and SGLang writes no performance.log record for a failed request"})
		case rep.ID != "":
			// The generation may have run (a failed download, a full disk): its record may be there.
			rr, loadPeak = r.joinPerf(ctx, c, srv, rr)
		}
		return rr, loadPeak, false, ""
	}

	if why := srv.dead(); why != "" {
		rr.Checks = append(rr.Checks, checks.Check{Name: checks.ServerAlive, Status: checks.Fail,
			Detail: withTail(fmt.Sprintf("answered, but then %s", why), srv), Cause: srv.crashCause("server crashed after answering")})
		halt = fmt.Sprintf("not sent: the server died after %s", at)
	} else {
		rr.Checks = append(rr.Checks, checks.Check{Name: checks.ServerAlive, Status: checks.Pass})
	}
	// The output check decodes a video once, for everything: its frame count and shape, and
	// (kept in the case's cache until the caller's forgetOutput) the frames and audio track
	// the consistency and repeat checks compare. A confirmation request is not compared:
	// nothing is kept.
	var decoded *compare.Cache
	if !at.confirm {
		decoded = r.cons.cache(c.ID)
	}
	rr.Checks = append(rr.Checks, r.output(ctx, c, rep, dir, &rr, decoded)...)
	if !at.confirm {
		rr.Checks = append(rr.Checks, r.consistency(ctx, c, &rr, dir)...)
	}
	if halt == "" {
		rr, loadPeak = r.joinPerf(ctx, c, srv, rr)
	}
	return rr, loadPeak, true, halt
}

// output saves the media and checks that it is there and has the declared shape. A video is
// decoded once (compare.Cache.Output: its frames counted, no ffprobe -count_frames decode), its
// frames and audio track kept in decoded for the comparisons that follow (nil: not kept).
func (r *run) output(ctx context.Context, c *suite.Case, rep reply, dir string, rr *checks.RequestResult, decoded *compare.Cache) []checks.Check {
	var out []checks.Check
	want := max(c.Request.N, 1)
	if c.Modality != suite.Image {
		want = 1
	}
	if len(rep.Files) == 0 {
		return append(out, checks.Check{Name: checks.OutputPresent, Status: checks.Fail,
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
	rr.Output = &checks.Output{Kind: kind, Path: paths[0], Format: rep.Ext, Bytes: rep.Files[0].Bytes}
	if len(rep.Files) != want {
		out = append(out, checks.Check{Name: checks.OutputPresent, Status: checks.Fail,
			Detail: fmt.Sprintf("asked for %d images, got %d", want, len(rep.Files))})
	} else {
		out = append(out, checks.Check{Name: checks.OutputPresent, Status: checks.Pass, Value: checks.Float(float64(rep.Files[0].Bytes)), Unit: "bytes"})
	}
	if !suite.Enabled(c.Checks.Output) {
		return append(out, checks.Check{Name: checks.OutputValid, Status: checks.Skip, Detail: "disabled by the case's checks.output"})
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
			info, err = r.opts.Probe(ctx, p)
		} else {
			info, err = decoded.Output(ctx, p)
		}
		if err != nil {
			st := checks.Fail
			if errors.Is(err, exec.ErrNotFound) {
				st = checks.Error // no ffprobe: we could not check, the output is not known bad
			}
			return append(out, checks.Check{Name: checks.OutputValid, Status: st, Detail: fmt.Sprintf("output is not decodable: %v", err)})
		}
		if k == 0 {
			fillOutput(rr.Output, info)
		}
		problems = append(problems, shapeProblems(c, info)...)
		if c.Modality == suite.VideoAudio && info.Audio != nil {
			problem, err := audioOutputProblem(ctx, decoded, p, info.Audio)
			if err != nil {
				st := checks.Fail // SGLang's extract_audio_pcm fails the request too
				if errors.Is(err, exec.ErrNotFound) {
					st = checks.Error
				}
				return append(out, checks.Check{Name: checks.OutputValid, Status: st, Detail: fmt.Sprintf("the audio track does not decode: %v", err)})
			}
			if problem != "" {
				problems = append(problems, problem)
			}
		}
	}
	if len(problems) > 0 {
		return append(out, checks.Check{Name: checks.OutputValid, Status: checks.Fail,
			Detail: strings.Join(problems, "; ")})
	}
	return append(out, checks.Check{Name: checks.OutputValid, Status: checks.Pass, Detail: describe(rr.Output)})
}

func fillOutput(o *checks.Output, info media.Info) {
	o.Width, o.Height = info.Width, info.Height
	if o.Kind == "video" {
		o.Frames, o.FPS, o.DurationS = info.Frames, info.FPS, info.DurationS
	}
	if a := info.Audio; a != nil {
		o.Audio = &checks.Audio{Codec: a.Codec, SampleRate: a.SampleRate, Channels: a.Channels, DurationS: a.DurationS}
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

func describe(o *checks.Output) string {
	s := fmt.Sprintf("%s %dx%d", o.Format, o.Width, o.Height)
	if o.Kind == "video" {
		s += fmt.Sprintf(", %d frames at %g fps", o.Frames, o.FPS)
	}
	if o.Audio != nil {
		s += fmt.Sprintf(", audio %s %d Hz", o.Audio.Codec, o.Audio.SampleRate)
	}
	return s
}

// joinPerf waits for the request's performance.log record and copies its timings.
func (r *run) joinPerf(ctx context.Context, c *suite.Case, srv *server, rr checks.RequestResult) (checks.RequestResult, startPeaks) {
	spec := r.opts.Suite.Servers[c.Server]
	if !suite.Enabled(c.Checks.PerfRecord) {
		rr.Checks = append(rr.Checks, checks.Check{Name: checks.PerfRecord, Status: checks.Skip, Detail: "disabled by the case's checks.perf_record"})
		return rr, startPeaks{}
	}
	if rr.RequestID == "" {
		rr.Checks = append(rr.Checks, checks.Check{Name: checks.PerfRecord, Status: checks.Fail,
			Detail: "the response carries no id to join performance.log on"})
		return rr, startPeaks{}
	}
	// On a full disk the server cannot write its record either: neither wait for it (from
	// the start, or once the disk fills up) nor call its absence the server's failure.
	noRecord := func(derr error) (checks.RequestResult, startPeaks) {
		rr.Checks = append(rr.Checks, checks.Check{Name: checks.PerfRecord, Status: checks.Error,
			Detail: fmt.Sprintf("not waited for: the disk is full (%v), so the server cannot write its performance.log record", derr)})
		return rr, startPeaks{}
	}
	if derr := r.diskFullErr(); derr != nil {
		return noRecord(derr)
	}
	wctx, stop := r.untilDiskFull(ctx)
	rec, err := srv.perf.Wait(wctx, rr.RequestID, spec.PerfRecordTimeout)
	stop()
	if err != nil {
		st := checks.Fail
		switch derr := r.diskFullErr(); {
		case ctx.Err() != nil:
			st = checks.Cancelled
		case derr != nil:
			return noRecord(derr)
		}
		rr.Checks = append(rr.Checks, checks.Check{Name: checks.PerfRecord, Status: st, Detail: err.Error()})
		return rr, startPeaks{}
	}
	rr.Stages = rec.StageTimes()
	rr.StepsMs = rec.Steps
	rr.ServerTotalMs = rec.TotalDurationMs
	rr.PeakVRAMMiB = rec.Peaks("runtime_peak")
	rr.Checks = append(rr.Checks, checks.PerfRecordJoined(rec.TotalDurationMs, len(rec.Stages), len(rec.Steps), rec.Impossible()))
	return rr, startPeaks{load: rec.Peaks("load_peak"), warmup: rec.Peaks("warmup_peak")}
}

// withTail appends the server's last log lines to a failure detail.
func withTail(detail string, srv *server) string {
	tail := srv.log.lastLines(8)
	if len(tail) == 0 {
		return detail
	}
	return detail + "\nlast server log lines:\n" + strings.Join(tail, "\n")
}

// saveTail keeps the server log tail beside the request's artifacts; best effort, since the
// same lines are also in the check detail and the full log is in the servers folder.
func saveTail(dir string, srv *server) {
	tail := srv.log.lastLines(tailLines)
	_ = os.WriteFile(filepath.Join(dir, "server-log-tail.txt"), []byte(strings.Join(tail, "\n")+"\n"), 0o644)
}
