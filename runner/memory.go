package runner

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/memory"
	"github.com/diffusion-check/diffusion-check/results"
)

// MemorySampler measures the peak memory of a server's process tree while it runs: GPU
// memory through NVML, host anonymous memory through /proc. The one implementation is
// internal/gpumem; tests use fakes.
type MemorySampler interface {
	// Start begins sampling the process tree rooted at pid (the server and every process it
	// spawns) until the session is stopped.
	Start(ctx context.Context, pid int) (memory.Session, error)
}

// memorySamplerCheck names the note a request or case carries when a memory source was left
// out; it is a skip, never a failure: the memory checks fall back to server-reported numbers.
const memorySamplerCheck = checks.MemorySampler

// startMemory starts sampling a freshly launched server and opens its load window. Without a
// sampler it does nothing; a sampler that cannot start is a note on the case, not an error.
// The session lives as long as the server, not as ctx: after a cancel, the requests still
// in flight end their windows with what was sampled, and the server's stop ends the session.
func (r *run) startMemory(ctx context.Context, srv *server) {
	if r.opts.Memory == nil || srv.cmd.Process == nil {
		return
	}
	sess, err := r.opts.Memory.Start(context.WithoutCancel(ctx), srv.cmd.Process.Pid)
	if err != nil {
		srv.memNote = "memory sampling did not start: " + err.Error()
		return
	}
	srv.mem = sess
	srv.memMarks.loadStart = time.Now()
	srv.loadWin = sess.Window()
}

// endLoadMemory closes the load window of a server that became ready and records its peaks
// on the case, beside whatever the server reports about itself.
func endLoadMemory(srv *server, cr *results.CaseResult) {
	var p memory.Peaks
	switch {
	case srv.loadWin != nil:
		p = srv.loadWin.End()
		srv.loadWin = nil
		srv.memMarks.add(memoryMark{caseID: cr.ID, start: srv.memMarks.loadStart, end: time.Now()})
	case srv.memNote != "":
		p.Notes = []string{srv.memNote}
	default:
		return
	}
	if cr.Load != nil && len(p.MiB) > 0 {
		if cr.Load.PeakVRAMMiB == nil {
			cr.Load.PeakVRAMMiB = map[string]float64{}
		}
		maps.Copy(cr.Load.PeakVRAMMiB, p.MiB)
	}
	if c, ok := samplerNote(p, "load"); ok {
		cr.Checks = append(cr.Checks, c)
	}
}

// mergePeaks adds the keys of add that peaks lacks, so that the first value seen per source
// wins; it returns the (possibly new) map.
func mergePeaks(peaks, add map[string]float64) map[string]float64 {
	for k, v := range add {
		if peaks == nil {
			peaks = map[string]float64{}
		}
		if _, ok := peaks[k]; !ok {
			peaks[k] = v
		}
	}
	return peaks
}

// requestMemory is the memory window of one request; a nil one measures nothing. srv,
// start and stop place the window on its server's timeline.
type requestMemory struct {
	w           memory.Window
	note        string
	p           memory.Peaks
	srv         *server
	start, stop time.Time
}

// openRequestMemory opens a window around a request, or returns nil without a session.
func (s *server) openRequestMemory() *requestMemory {
	switch {
	case s.mem != nil:
		return &requestMemory{w: s.mem.Window(), srv: s, start: time.Now()}
	case s.memNote != "":
		return &requestMemory{note: s.memNote}
	}
	return nil
}

// end closes the window as soon as the request's output has arrived.
func (m *requestMemory) end() {
	if m == nil {
		return
	}
	if m.w != nil {
		m.p = m.w.End()
		m.w = nil
		m.stop = time.Now()
	}
	if m.note != "" {
		m.p.Notes = append(m.p.Notes, m.note)
	}
}

// record stores the window's peaks on the request beside the server-reported ones, and
// returns a note for the sources left out (a skipped memory.sampler check; none when every
// source sampled).
func (m *requestMemory) record(rr *results.RequestResult) []results.Check {
	if m == nil {
		return nil
	}
	if m.srv != nil && !m.stop.IsZero() {
		m.srv.memMarks.add(memoryMark{caseID: rr.Case, index: rr.Index, confirm: rr.Confirm, start: m.start, end: m.stop, reported: reportedOf(rr.PeakVRAMMiB)})
	}
	if len(m.p.MiB) > 0 {
		if rr.PeakVRAMMiB == nil {
			rr.PeakVRAMMiB = map[string]float64{}
		}
		maps.Copy(rr.PeakVRAMMiB, m.p.MiB)
	}
	if c, ok := samplerNote(m.p, "request"); ok {
		return []results.Check{c}
	}
	return nil
}

// samplerNote turns the notes of a window into one skipped check.
func samplerNote(p memory.Peaks, phase string) (results.Check, bool) {
	if len(p.Notes) == 0 {
		return results.Check{}, false
	}
	notes := slices.Compact(slices.Clone(p.Notes))
	return results.Check{
		Name: memorySamplerCheck, Status: results.Skip, Source: strings.Join(slices.Sorted(maps.Keys(p.MiB)), ","),
		Detail: phase + " memory: " + strings.Join(notes, "; "),
	}, true
}
