package refserver

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"
)

// perfRecord is one line of performance.log, in the shape of docs/sglang-compat.md §3.
type perfRecord struct {
	RequestID       string      `json:"request_id"`
	Timestamp       string      `json:"timestamp"`
	Tag             string      `json:"tag"`
	CommitHash      string      `json:"commit_hash"`
	Stages          []stageTime `json:"stages"`
	Steps           []float64   `json:"steps"`
	TotalDurationMs float64     `json:"total_duration_ms"`
	MemorySnapshots memory      `json:"memory_snapshots"`
}

// PerfLogName is the file in Config.PerfLogDir that perf records are appended to.
const PerfLogName = "performance.log"

// recordPerf writes the request's perf record, as SGLang's GPU worker does after the forward
// pass and before the result goes back to the HTTP server (managers/gpu_worker.py): only with
// stage logging on (SGLANG_DIFFUSION_STAGE_LOGGING), never for the warm-up, never for a failed
// request (the callers call it on success only). Without a perf log dir or with the
// no-perf-record fault nothing is written. Config.PerfLag > 0 writes it that much later
// instead, in the background; a record still waiting when the handler closes is written at
// once: a graceful shutdown loses nothing.
func (h *Handler) recordPerf(rn run, out *outcome) {
	if !h.cfg.StageLogging || h.cfg.PerfLogDir == "" || h.cfg.Faults.NoPerfRecord {
		return
	}
	rec := perfRecord{
		RequestID: rn.id, Timestamp: time.Now().UTC().Format("2006-01-02T15:04:05.000000+00:00"),
		Tag: "pipeline_stage_metrics", CommitHash: h.commit,
		Stages: out.stages, Steps: out.steps, TotalDurationMs: ms(out.total), MemorySnapshots: out.mem,
	}
	write := func() {
		if err := h.appendPerf(rec); err != nil {
			h.logf("ERROR", "[%s #%d] %v", rn.id, rn.number, err)
		}
	}
	lag := h.cfg.PerfLag
	if lag == 0 {
		write()
		return
	}
	if !h.goBackground(func() {
		t := time.NewTimer(lag)
		defer t.Stop()
		select {
		case <-t.C:
		case <-h.stopping:
		}
		write()
	}) {
		write()
	}
}

// appendPerf appends one record as one line with a single write to a file opened with
// O_APPEND, so that a reader tailing the file never sees half a line.
func (h *Handler) appendPerf(rec perfRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("perf record %s: %w", rec.RequestID, err)
	}
	b = append(b, '\n')
	h.perfMu.Lock()
	defer h.perfMu.Unlock()
	if err := os.MkdirAll(h.cfg.PerfLogDir, 0o755); err != nil {
		return fmt.Errorf("perf record %s: %w", rec.RequestID, err)
	}
	path := filepath.Join(h.cfg.PerfLogDir, PerfLogName)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("perf record %s: %w", rec.RequestID, err)
	}
	_, werr := f.Write(b)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("perf record %s: append to %s: %w", rec.RequestID, path, werr)
	}
	return nil
}

// commitHash is the VCS revision the binary was built from, as SGLang reports its own commit.
func commitHash() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && s.Value != "" {
				return s.Value
			}
		}
	}
	return "unknown"
}
