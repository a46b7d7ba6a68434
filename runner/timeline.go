package runner

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/memory"
	"github.com/diffusion-check/diffusion-check/internal/pictures"
	"github.com/diffusion-check/diffusion-check/results"
)

// timelineSchema tags a server start's memory timeline, artifacts/memory/<start>.json.
const timelineSchema = "diffusion-check/memory-timeline/v1"

// maxMarks bounds the windows a timeline keeps (a reused server may serve many requests).
const maxMarks = 4096

// timelineSources are the labels of the timeline's sources, in memory.Timeline* order.
var timelineSources = [memory.TimelineSources]string{
	memory.TimelineDevice:  checks.SourceNVMLDevice,
	memory.TimelineProcess: checks.SourceNVMLProcess,
	memory.TimelineHost:    checks.SourceHostAnon,
}

// serverReported are the sources a server reports about itself, drawn per window.
var serverReported = []string{checks.SourceServerReserved, checks.SourceServerAllocated}

// memoryMarks are the windows of one server start (its load, each request), for its timeline
// and its memory pictures.
type memoryMarks struct {
	mu        sync.Mutex
	loadStart time.Time
	marks     []memoryMark
	dropped   int
}

// memoryMark is one window: a case's load or one request, and what the server said about it.
type memoryMark struct {
	caseID     string
	index      int // 0: the load
	confirm    bool
	start, end time.Time
	reported   map[string]float64
}

func (m *memoryMarks) add(k memoryMark) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.marks) >= maxMarks {
		m.dropped++
		return
	}
	m.marks = append(m.marks, k)
}

// sorted is a copy of the marks in the order they began, and how many were dropped.
func (m *memoryMarks) sorted() ([]memoryMark, int) {
	m.mu.Lock()
	out, dropped := slices.Clone(m.marks), m.dropped
	m.mu.Unlock()
	slices.SortStableFunc(out, func(a, b memoryMark) int { return a.start.Compare(b.start) })
	return out, dropped
}

func (k memoryMark) label() string {
	switch {
	case k.index == 0:
		return k.caseID + " load"
	case k.confirm:
		return k.caseID + " confirm " + strconv.Itoa(k.index)
	}
	return k.caseID + " request " + strconv.Itoa(k.index)
}

// reportedOf is the server-reported part of a window's peaks.
func reportedOf(peaks map[string]float64) map[string]float64 {
	var out map[string]float64
	for _, s := range serverReported {
		if v, ok := peaks[s]; ok {
			if out == nil {
				out = map[string]float64{}
			}
			out[s] = v
		}
	}
	return out
}

// timelineOf is the server's timeline so far, when its sampler keeps one.
func timelineOf(srv *server) (memory.Timeline, bool) {
	if !keepsTimeline(srv) {
		return memory.Timeline{}, false
	}
	return srv.mem.(memory.Recorder).Timeline(), true
}

// keepsTimeline says whether the server's sampler keeps a timeline, without copying it.
func keepsTimeline(srv *server) bool {
	_, ok := srv.mem.(memory.Recorder)
	return ok && srv.mem != nil
}

// startName is the name of a server start: its folder under servers/ ("01-sglang").
func startName(srv *server) string { return filepath.Base(filepath.Dir(srv.logPath)) }

// writeTimeline writes a stopped server's memory timeline to artifacts/memory/<start>.json;
// a failure is told, never fatal (the verdicts do not depend on it).
func (r *run) writeTimeline(srv *server) {
	tl, ok := timelineOf(srv)
	if !ok {
		return
	}
	start := startName(srv)
	path, err := r.rec.TimelinePath(start)
	if err == nil {
		marks, dropped := srv.memMarks.sorted()
		err = os.WriteFile(path, encodeTimeline(start, tl, marks, dropped), 0o644)
	}
	if err != nil {
		r.logf("warning: memory timeline of server start %s: %v", start, err)
	}
}

// encodeTimeline writes a timeline as JSON: a header, the windows, and the points as arrays
// [ms, nvml_device, nvml_process, host_anon] (MiB, null where not measured), one per line.
// Written by hand: 8,192 points as objects would double the file.
func encodeTimeline(start string, tl memory.Timeline, marks []memoryMark, dropped int) []byte {
	b := fmt.Appendf(nil, "{\"schema\":%s,\"server_start\":%s,\"started_at\":%s,\"interval_ms\":%s,\"bucket_ms\":%s,\"samples\":%d,\"sources\":%s,\n\"windows\":[",
		jsonText(timelineSchema), jsonText(start), jsonText(tl.Start.UTC().Format(time.RFC3339Nano)), msText(tl.Interval), msText(tl.Width), tl.Samples,
		jsonText(timelineSources[:]))
	for i, k := range marks {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, "\n{\"case\":%s,\"request\":%d", jsonText(k.caseID), k.index)
		if k.confirm {
			b = append(b, ",\"confirm\":true"...)
		}
		b = fmt.Appendf(b, ",\"start_ms\":%s,\"end_ms\":%s", msText(k.start.Sub(tl.Start)), msText(k.end.Sub(tl.Start)))
		for _, s := range serverReported {
			if v, ok := k.reported[s]; ok {
				b = fmt.Appendf(b, ",\"%s_mb\":%s", s, strconv.FormatFloat(v, 'f', 1, 64))
			}
		}
		b = append(b, '}')
	}
	b = fmt.Appendf(b, "],\n\"windows_dropped\":%d,\n\"points\":[", dropped)
	for i, p := range tl.Points {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n["...)
		b = append(b, msText(p.At)...)
		for s := range memory.TimelineSources {
			b = append(b, ',')
			if p.Has[s] {
				b = strconv.AppendFloat(b, float64(p.MiB[s]), 'f', 1, 32)
			} else {
				b = append(b, "null"...)
			}
		}
		b = append(b, ']')
	}
	return append(b, "]}\n"...)
}

// jsonText is v as JSON (a string or a list of them: encoding/json cannot fail on either).
func jsonText(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// msText is a duration in milliseconds, to the microsecond.
func msText(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', -1, 64)
}

// failedMemory is one memory check that failed, and the window it failed in.
type failedMemory struct {
	check results.Check
	at    slot // the request; index 0: the load
}

// memoryPictures names the server start's memory timeline in the case's record, and draws,
// for every memory check of a finished case that failed (the load peak, a request's runtime
// peak or its growth), the server start's memory over time with the limit, the failing
// window shaded and the spike marked, into the window's artifact folder, named in the
// window's record. A picture that cannot be drawn is told, never fatal.
func (r *run) memoryPictures(srv *server, cr *results.CaseResult) {
	if srv == nil {
		return
	}
	// The record names the timeline its server start writes when it stops (writeTimeline).
	if keepsTimeline(srv) && cr.Load != nil {
		cr.Load.MemoryTimeline, _ = results.TimelineFile(startName(srv))
	}
	var failed []failedMemory
	for _, ck := range cr.Checks {
		if memoryFailure(ck) {
			failed = append(failed, failedMemory{check: ck})
		}
	}
	for _, rrs := range [][]results.RequestResult{cr.Requests, cr.Confirm} {
		for _, rr := range rrs {
			for _, ck := range rr.Checks {
				if memoryFailure(ck) {
					failed = append(failed, failedMemory{check: ck, at: slotOf(rr)})
				}
			}
		}
	}
	if len(failed) == 0 {
		return
	}
	tl, ok := timelineOf(srv)
	if !ok || len(tl.Points) == 0 {
		return
	}
	marks, _ := srv.memMarks.sorted()
	for _, f := range failed {
		if err := r.memoryPicture(cr, f, tl, marks); err != nil {
			r.logf("warning: %s: memory picture: %v", cr.ID, err)
		}
	}
}

func memoryFailure(ck results.Check) bool {
	return ck.Status == results.Fail && checks.KindOf(ck.Name).Group == checks.GroupMemory && ck.Value != nil
}

func (r *run) memoryPicture(cr *results.CaseResult, f failedMemory, tl memory.Timeline, marks []memoryMark) error {
	i := slices.IndexFunc(marks, func(k memoryMark) bool {
		return k.caseID == cr.ID && k.index == f.at.index && k.confirm == f.at.confirm
	})
	if i < 0 {
		return fmt.Errorf("%s: no window of the timeline for it", f.check.Name)
	}
	// The record the picture goes into: the load's, or the failing request's.
	var pics *[]results.Picture
	var dir string
	var err error
	if f.at.index == 0 {
		if cr.Load == nil {
			return fmt.Errorf("%s: the case has no server start", f.check.Name)
		}
		pics = &cr.Load.Pictures
		dir, err = r.rec.LoadArtifactDir(cr.ID)
	} else {
		reqs := cr.Requests
		if f.at.confirm {
			reqs = cr.Confirm
		}
		j := slices.IndexFunc(reqs, func(rr results.RequestResult) bool { return rr.Index == f.at.index })
		if j < 0 {
			return fmt.Errorf("%s: no request %d in the case", f.check.Name, f.at.index)
		}
		pics = &reqs[j].Pictures
		dir, err = r.rec.ArtifactDir(cr.ID, f.at.index, f.at.confirm)
	}
	if err != nil {
		return err
	}
	m := memoryChart(cr.ID, f, tl, marks, i)
	if cr.Load != nil && cr.Load.MemoryTimeline != "" {
		m.Lines = append(m.Lines, pictures.Line{Text: "the whole server start's timeline: " + cr.Load.MemoryTimeline})
	}
	path := filepath.Join(dir, pictures.MemoryFilePrefix+f.check.Name+"-"+cmp.Or(f.check.Source, "all")+".png")
	if err := pictures.WriteMemory(path, m); err != nil {
		return err
	}
	// Drawn when the case ends, after the request's line: results.json names it, requests.jsonl
	// does not.
	return recordPicture(r.rec, pics, results.Picture{Kind: results.PictureMemory, Check: f.check.Name, Source: f.check.Source}, path)
}

// memoryChart is the picture of failure f in window i of marks.
func memoryChart(caseID string, f failedMemory, tl memory.Timeline, marks []memoryMark, i int) pictures.Memory {
	ms := func(t time.Time) float64 { return float64(t.Sub(tl.Start).Microseconds()) / 1000 }
	ck := f.check
	where := "load"
	if f.at.index > 0 {
		where = f.at.String()
	}
	title := fmt.Sprintf("%s %s: %s (%s) %.0f MiB", caseID, where, ck.Name, cmp.Or(ck.Source, "?"), *ck.Value)
	limit := math.NaN()
	if ck.Limit != nil {
		limit = *ck.Limit
		title += fmt.Sprintf(", limit %.0f MiB", limit)
	}
	m := pictures.Memory{Title: title, Limit: limit, LimitLabel: "limit of " + ck.Name + " (" + ck.Source + ")"}
	detail, _, _ := strings.Cut(ck.Detail, "\n")
	if c := cmp.Or(ck.Cause, detail); c != "" {
		m.Lines = append(m.Lines, pictures.Line{Text: c, Bad: true})
	}
	res := fmt.Sprintf("timeline: %d samples at %s, ", tl.Samples, tl.Interval)
	if tl.Width == 0 {
		res += "every change of 1 MiB or more kept"
	} else {
		res += fmt.Sprintf("in %s buckets, each its highest sample", tl.Width)
	}
	m.Lines = append(m.Lines, pictures.Line{Text: res})
	for s := range memory.TimelineSources {
		line := pictures.MemoryLine{Label: timelineSources[s]}
		for _, p := range tl.Points {
			if p.Has[s] {
				line.Samples = append(line.Samples, pictures.Sample{Ms: float64(p.At.Microseconds()) / 1000, MiB: float64(p.MiB[s])})
			}
		}
		if len(line.Samples) > 0 {
			m.Series = append(m.Series, line)
		}
	}
	for _, src := range serverReported {
		rep := pictures.Reported{Label: src}
		for _, k := range marks {
			if v, ok := k.reported[src]; ok {
				rep.Spans = append(rep.Spans, pictures.Span{StartMs: ms(k.start), EndMs: ms(k.end), MiB: v})
			}
		}
		if len(rep.Spans) > 0 {
			m.Reported = append(m.Reported, rep)
		}
	}
	for _, k := range marks {
		m.Windows = append(m.Windows, pictures.Span{Label: k.label(), StartMs: ms(k.start), EndMs: ms(k.end)})
	}
	w := marks[i]
	m.Failing = pictures.Span{Label: "failing window: " + w.label(), StartMs: ms(w.start), EndMs: ms(w.end)}
	m.Spike, m.SpikeLabel = spikeIn(tl, ck, m.Failing)
	m.View = memoryView(m.Failing, marks, i, ms)
	m.Lines = append(m.Lines, pictures.Line{Text: fmt.Sprintf("shown: %s to %s, the failing window and the one before it",
		viewSeconds(m.View.StartMs), viewSeconds(m.View.EndMs))})
	return m
}

// memoryView is the stretch of time a memory picture shows: the failing window (marks[i]) and
// the window before it, when there is one, with a margin of a tenth of that on each side, so
// that a request of 30 ms after a load of seconds fills the picture, next to the request
// before it to compare with (the whole timeline stays in the JSON).
func memoryView(failing pictures.Span, marks []memoryMark, i int, ms func(time.Time) float64) pictures.Span {
	from := failing.StartMs
	if i > 0 {
		from = ms(marks[i-1].start)
	}
	margin := math.Max((failing.EndMs-from)/10, 1)
	return pictures.Span{StartMs: math.Max(from-margin, 0), EndMs: failing.EndMs + margin}
}

// viewSeconds is a time in ms since the server started, for a picture's header.
func viewSeconds(ms float64) string { return fmt.Sprintf("%.3f s", ms/1000) }

// spikeIn is the point to mark: the failing source's highest sample inside the window when
// the timeline holds that source; for a server-reported source, its value at the window's
// middle.
func spikeIn(tl memory.Timeline, ck results.Check, w pictures.Span) (*pictures.Sample, string) {
	s := slices.Index(timelineSources[:], ck.Source)
	if s < 0 {
		return &pictures.Sample{Ms: (w.StartMs + w.EndMs) / 2, MiB: *ck.Value}, ck.Source + " reported"
	}
	var best *pictures.Sample
	for j, p := range tl.Points {
		at := float64(p.At.Microseconds()) / 1000
		end := math.Inf(1)
		if j+1 < len(tl.Points) {
			end = float64(tl.Points[j+1].At.Microseconds()) / 1000
		}
		// A step that is in force at any time inside the window.
		if !p.Has[s] || end <= w.StartMs || at > w.EndMs {
			continue
		}
		if best == nil || float64(p.MiB[s]) > best.MiB {
			best = &pictures.Sample{Ms: math.Max(at, w.StartMs), MiB: float64(p.MiB[s])}
		}
	}
	return best, ck.Source + " peak"
}
