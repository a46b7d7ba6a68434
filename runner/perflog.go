package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/diffusion-check/diffusion-check/checks"
)

// PerfRecord is one line of SGLang's performance.log (spec §3). Unknown fields are ignored:
// records evolve between server versions.
type PerfRecord struct {
	RequestID       string                    `json:"request_id"`
	Timestamp       string                    `json:"timestamp"`
	Tag             string                    `json:"tag"`
	CommitHash      string                    `json:"commit_hash"`
	Stages          []PerfStage               `json:"stages"`
	Steps           []float64                 `json:"steps"`
	TotalDurationMs float64                   `json:"total_duration_ms"`
	MemorySnapshots map[string]MemorySnapshot `json:"memory_snapshots"`
}

// PerfStage is one stage timing of a perf record.
type PerfStage struct {
	Name            string  `json:"name"`
	ExecutionTimeMs float64 `json:"execution_time_ms"`
}

// MemorySnapshot is one memory checkpoint of a perf record. Pointers tell "not reported"
// apart from zero.
type MemorySnapshot struct {
	AllocatedMB     *float64 `json:"allocated_mb"`
	ReservedMB      *float64 `json:"reserved_mb"`
	PeakAllocatedMB *float64 `json:"peak_allocated_mb"`
	PeakReservedMB  *float64 `json:"peak_reserved_mb"`
	PeakHostAnonMB  *float64 `json:"peak_host_anon_mb"`
}

// ParsePerfLine decodes one performance.log line. A line without a request id is an error:
// it cannot be joined to a request.
func ParsePerfLine(line []byte) (PerfRecord, error) {
	var r PerfRecord
	if err := json.Unmarshal(line, &r); err != nil {
		return PerfRecord{}, err
	}
	if r.RequestID == "" {
		return PerfRecord{}, errors.New("record has no request_id")
	}
	return r, nil
}

// stages converts the record's stage list, keeping the pipeline order. A stage reported
// twice (a pipeline that loops) is summed.
func (r PerfRecord) stages() checks.Stages {
	var out checks.Stages
	idx := map[string]int{}
	for _, s := range r.Stages {
		if i, ok := idx[s.Name]; ok {
			out[i].Ms += s.ExecutionTimeMs
			continue
		}
		idx[s.Name] = len(out)
		out = append(out, checks.Stage{Name: s.Name, Ms: s.ExecutionTimeMs})
	}
	return out
}

// peaks returns the server-reported peaks of one snapshot, labelled by source.
func (r PerfRecord) peaks(snapshot string) map[string]float64 {
	s, ok := r.MemorySnapshots[snapshot]
	if !ok {
		return nil
	}
	out := map[string]float64{}
	if v := s.PeakReservedMB; v != nil {
		out["server_reserved"] = *v
	}
	if v := s.PeakAllocatedMB; v != nil {
		out["server_allocated"] = *v
	}
	if v := s.PeakHostAnonMB; v != nil {
		out["server_host_anon"] = *v
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// maxPerfLine bounds one performance.log line: a record is a few KiB; a line that never
// ends must not grow without bound in memory.
const maxPerfLine = 16 << 20

// perfLog follows a performance.log file as the server appends to it and indexes its records
// by request id. It reads only complete lines, so a record being written is never half-read;
// a line longer than maxPerfLine is skipped with a note; a file that was truncated or
// replaced (log rotation) is read again from its start.
type perfLog struct {
	path string

	mu       sync.Mutex
	fi       os.FileInfo // the file read last, to notice that it was replaced
	offset   int64
	part     []byte
	skipping bool // inside a line past maxPerfLine: drop up to its end
	records  map[string]PerfRecord
	bad      []string // lines that could not be parsed or were skipped, for the failure detail
}

func newPerfLog(path string) *perfLog {
	return &perfLog{path: path, records: map[string]PerfRecord{}}
}

// poll reads whatever was appended since the last call.
func (p *perfLog) poll() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	f, err := os.Open(p.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if p.fi != nil && (!os.SameFile(p.fi, fi) || fi.Size() < p.offset) {
		// Rotated (another file now) or truncated: what it holds now starts at byte 0.
		p.offset, p.part, p.skipping = 0, nil, false
	}
	p.fi = fi
	if _, err := f.Seek(p.offset, io.SeekStart); err != nil {
		return err
	}
	buf := make([]byte, 256<<10)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			p.offset += int64(n)
			p.feed(buf[:n])
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// feed splits data into lines, keeping an unfinished one for the next call.
func (p *perfLog) feed(data []byte) {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			if !p.skipping {
				p.part = append(p.part, data...)
				if len(p.part) > maxPerfLine {
					p.note(fmt.Sprintf("a line longer than %d MiB ending after byte %d was skipped", maxPerfLine>>20, p.offset))
					p.part, p.skipping = nil, true
				}
			}
			return
		}
		if p.skipping {
			p.skipping = false
		} else {
			p.line(append(p.part, data[:i]...))
		}
		p.part = p.part[:0]
		data = data[i+1:]
	}
}

func (p *perfLog) line(b []byte) {
	line := bytes.TrimSpace(b)
	if len(line) == 0 {
		return
	}
	rec, err := ParsePerfLine(line)
	if err != nil {
		p.note(fmt.Sprintf("%.120s: %v", line, err))
		return
	}
	p.records[rec.RequestID] = rec
}

func (p *perfLog) note(s string) {
	if len(p.bad) < 5 {
		p.bad = append(p.bad, s)
	}
}

// errNoPerfRecord is returned when no record for a request appeared in time.
var errNoPerfRecord = errors.New("no performance.log record")

// wait returns the record of a request, polling the file until it appears or timeout passes.
func (p *perfLog) wait(ctx context.Context, id string, timeout time.Duration) (PerfRecord, error) {
	deadline := time.Now().Add(timeout)
	for {
		if err := p.poll(); err != nil {
			return PerfRecord{}, fmt.Errorf("read %s: %w", p.path, err)
		}
		p.mu.Lock()
		rec, ok := p.records[id]
		bad := p.bad
		p.mu.Unlock()
		if ok {
			return rec, nil
		}
		if time.Now().After(deadline) {
			var unreadable string
			if len(bad) > 0 {
				unreadable = fmt.Sprintf(" (%d unreadable lines, first: %s)", len(bad), bad[0])
			}
			return PerfRecord{}, fmt.Errorf("%w for request_id %q within %s in %s%s", errNoPerfRecord, id, timeout, p.path, unreadable)
		}
		select {
		case <-ctx.Done():
			return PerfRecord{}, ctx.Err()
		case <-time.After(25 * time.Millisecond):
		}
	}
}
