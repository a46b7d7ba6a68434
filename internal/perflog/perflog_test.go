package perflog

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/results"
)

// specRecord is the record of docs/sglang-compat.md §3, plus a field newer servers add.
const specRecord = `{"request_id": "req-1", "timestamp": "2026-08-16T10:01:02.345678+00:00", "tag": "pipeline_stage_metrics", "commit_hash": "abc",
 "stages": [{"name": "TextEncodingStage", "execution_time_ms": 232.0}, {"name": "DenoisingStage", "execution_time_ms": 12404.2}],
 "steps": [196.2, 242.2, 248.9],
 "total_duration_ms": 12799.1,
 "memory_snapshots": {"load_peak": {"peak_reserved_mb": 13120.0, "peak_allocated_mb": 12800.0},
                      "runtime_peak": {"peak_reserved_mb": 24838.0, "peak_allocated_mb": 24001.0, "cache_stats": {"hits": 3}}}}`

func TestParseLine(t *testing.T) {
	rec, err := ParseLine([]byte(strings.ReplaceAll(specRecord, "\n", "")))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(results.Stages{{Name: "TextEncodingStage", Ms: 232}, {Name: "DenoisingStage", Ms: 12404.2}}, rec.StageTimes()); diff != "" {
		t.Errorf("stages (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]float64{"server_reserved": 24838, "server_allocated": 24001}, rec.Peaks("runtime_peak")); diff != "" {
		t.Errorf("runtime peaks (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]float64{"server_reserved": 13120, "server_allocated": 12800}, rec.Peaks("load_peak")); diff != "" {
		t.Errorf("load peaks (-want +got):\n%s", diff)
	}
	if got := rec.Peaks("warmup_peak"); got != nil {
		t.Errorf("absent snapshot: got %v, want nil (not reported, never zero)", got)
	}
}

func TestParseLineErrors(t *testing.T) {
	for _, line := range []string{``, `{`, `[]`, `{"tag":"x"}`, `{"request_id": 5}`} {
		if _, err := ParseLine([]byte(line)); err == nil {
			t.Errorf("ParseLine(%q): no error", line)
		}
	}
}

// TestPerfLogFollowsAppends reads a file while it is being written, including a record split
// across two writes and a garbage line, and joins by request id.
func TestPerfLogFollowsAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "performance.log")
	p := New(path)
	if _, err := p.Wait(t.Context(), "req-1", 0); err == nil {
		t.Fatal("wait on a missing file: no error")
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line := strings.ReplaceAll(specRecord, "\n", "") + "\n"
	if _, err := f.WriteString("not json\n" + line[:40]); err != nil {
		t.Fatal(err)
	}
	if err := p.poll(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, ok := p.byID["req-1"]; ok {
		t.Fatal("half a line was parsed")
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		if _, err := f.WriteString(line[40:]); err != nil {
			t.Error(err) // and the wait below times out
		}
	}()
	rec, err := p.Wait(t.Context(), "req-1", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if rec.TotalDurationMs != 12799.1 {
		t.Errorf("total %v", rec.TotalDurationMs)
	}
	_, err = p.Wait(t.Context(), "req-2", 30*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), `request_id "req-2"`) || !strings.Contains(err.Error(), "1 unreadable lines") {
		t.Errorf("missing record: %v", err)
	}
}

func FuzzParseLine(f *testing.F) {
	f.Add([]byte(strings.ReplaceAll(specRecord, "\n", "")))
	f.Add([]byte(`{"request_id":"a","stages":[{"name":"A","execution_time_ms":1},{"name":"A","execution_time_ms":2}]}`))
	f.Add([]byte(`{"request_id":"a","memory_snapshots":{"load_peak":null}}`))
	f.Add([]byte(`{"request_id":"a","steps":[1.0,NaN,-Infinity],"total_duration_ms":1e999}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		rec, err := ParseLine(line)
		if err != nil {
			return
		}
		if rec.RequestID == "" {
			t.Fatal("accepted a record without request_id")
		}
		seen := map[string]bool{}
		for _, s := range rec.StageTimes() {
			if seen[s.Name] {
				t.Fatalf("stage %q twice", s.Name)
			}
			seen[s.Name] = true
		}
		rec.Peaks("load_peak")
		rec.Peaks("runtime_peak")
		// Every number read is finite: results.json cannot hold NaN or infinity.
		for _, v := range append(slices.Clone(rec.Steps), rec.TotalDurationMs) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("non-finite value %v accepted", v)
			}
		}
		for _, s := range rec.Stages {
			if math.IsNaN(s.ExecutionTimeMs) || math.IsInf(s.ExecutionTimeMs, 0) {
				t.Fatalf("non-finite stage %v accepted", s)
			}
		}
	})
}

// A record that names its request but cannot be read says so, field by field and value by
// value, instead of leaving its request to wait for a record that never comes.
func TestParseLineMalformed(t *testing.T) {
	for _, tt := range []struct {
		line string
		want string
	}{
		{`{"request_id": "r", "total_duration_ms": "12.5"}`, `malformed record for request_id "r": total_duration_ms: want a number, got "12.5"`},
		{`{"request_id": "r", "total_duration_ms": NaN}`, `malformed record for request_id "r": total_duration_ms: NaN is not a finite number`},
		{`{"request_id": "r", "steps": [1.0, -Infinity, "x"]}`, `steps[1]: -Infinity is not a finite number; steps[2]: want a number, got "x"`},
		{`{"request_id": "r", "steps": 3}`, `steps: want a list, got 3`},
		{`{"request_id": "r", "stages": [{"name": "DenoisingStage", "execution_time_ms": Infinity}]}`,
			`stages[0].execution_time_ms: Infinity is not a finite number`},
		{`{"request_id": "r", "stages": [{"execution_time_ms": 1}]}`, `stages[0].name: missing`},
		{`{"request_id": "r", "stages": [{"name": "A"}]}`, `stages[0].execution_time_ms: missing`},
		{`{"request_id": "r", "memory_snapshots": {"runtime_peak": {"peak_reserved_mb": "lots"}}}`,
			`memory_snapshots.runtime_peak.peak_reserved_mb: want a number, got "lots"`},
		{`{"request_id": "r", "memory_snapshots": []}`, `memory_snapshots: want an object, got []`},
		{`{"request_id": "r", "steps": [1.0, 2.`, `malformed record for request_id "r": not a JSON object`},
		{`{"request_id": 5}`, `malformed record: request_id: want a string, got 5`},
	} {
		_, err := ParseLine([]byte(tt.line))
		var me *MalformedRecordError
		if !errors.As(err, &me) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseLine(%s):\n got %v\nwant a *MalformedRecordError containing %q", tt.line, err, tt.want)
		}
	}
	// Not malformed: null is "not reported", a string holding "NaN" elsewhere is text, and
	// a negative time is read as it is (the perf checks fail it).
	rec, err := ParseLine([]byte(`{"request_id": "r", "tag": "NaN Infinity", "total_duration_ms": -3.0, "steps": null,
 "memory_snapshots": {"load_peak": null, "runtime_peak": {"peak_reserved_mb": null, "cache_stats": {"x": NaN}}}}`))
	if err != nil {
		t.Errorf("a NaN in an unknown field failed the record: %v", err)
	}
	rec, err = ParseLine([]byte(`{"request_id": "r", "tag": "NaN Infinity", "total_duration_ms": -3.0, "steps": null,
 "memory_snapshots": {"load_peak": null, "runtime_peak": {"peak_reserved_mb": null}}}`))
	if err != nil || rec.TotalDurationMs != -3 || rec.Tag != "NaN Infinity" || rec.Peaks("runtime_peak") != nil {
		t.Errorf("got %+v, %v", rec, err)
	}
}

// The request whose record is malformed gets that error at once, with file and line.
func TestPerfLogMalformedRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "performance.log")
	if err := os.WriteFile(path, []byte("{\"request_id\": \"a\", \"total_duration_ms\": 1.0}\n"+
		"{\"request_id\": \"b\", \"steps\": [1.0, NaN]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := New(path)
	start := time.Now()
	_, err := p.Wait(t.Context(), "b", 10*time.Second)
	if err == nil || err.Error() != path+`:2: malformed record for request_id "b": steps[1]: NaN is not a finite number` {
		t.Errorf("got %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Error("waited for the timeout instead of reporting the malformed record")
	}
	if _, err := p.Wait(t.Context(), "a", 0); err != nil {
		t.Errorf("the good record: %v", err)
	}
}

// TestPerfLogRereadsTruncatedAndRotated: a performance.log that is truncated, or replaced by
// a new file (log rotation), is read again from its start; records after it are found.
func TestPerfLogRereadsTruncatedAndRotated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "performance.log")
	rec := func(id string) string { return `{"request_id": "` + id + `", "total_duration_ms": 1}` + "\n" }
	p := New(path)
	if err := os.WriteFile(path, []byte(rec("req-1")+rec("req-2")+rec("req-3")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(t.Context(), "req-3", time.Second); err != nil {
		t.Fatal(err)
	}
	// Truncated in place, then a shorter content: the offset is past its end.
	if err := os.WriteFile(path, []byte(rec("req-4")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(t.Context(), "req-4", time.Second); err != nil {
		t.Errorf("after truncation: %v", err)
	}
	// Rotated: renamed away, a new file in its place, longer than the offset read so far.
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(rec("req-5")+rec("req-6")+rec("req-7")), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"req-5", "req-6", "req-7"} {
		if _, err := p.Wait(t.Context(), id, time.Second); err != nil {
			t.Errorf("after rotation: %v", err)
		}
	}
}

// TestPerfLogSkipsOverlongLine: an unterminated 300 MiB line is not held in memory; it is
// skipped with a note, and the record after its end is read.
func TestPerfLogSkipsOverlongLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "performance.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := New(path)
	chunk := []byte(strings.Repeat("x", 1<<20))
	for range 300 {
		if _, err := f.Write(chunk); err != nil {
			t.Fatal(err)
		}
		if err := p.poll(t.Context()); err != nil {
			t.Fatal(err)
		}
		if len(p.part) > maxLine {
			t.Fatalf("holding %d bytes of one line", len(p.part))
		}
	}
	if _, err := f.WriteString("\n" + `{"request_id": "after", "total_duration_ms": 1}` + "\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(t.Context(), "after", time.Second); err != nil {
		t.Fatal(err)
	}
	_, err = p.Wait(t.Context(), "missing", 10*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "a line longer than 16 MiB") {
		t.Errorf("no note of the skipped line: %v", err)
	}
}

// perfRecordLine is one performance.log line for request id, as SGLang writes it
// (perf_logger.log_request_summary: request_id first).
func perfRecordLine(id string, totalMs float64) string {
	return fmt.Sprintf(
		`{"request_id": %q, "commit_hash": "abc", "tag": "pipeline_stage_metrics", "stages": [], "steps": [], "total_duration_ms": %g, "memory_snapshots": {}}`,
		id,
		totalMs,
	) + "\n"
}

// TestPerfLogRecordJoinsOneRequest: a record is handed to one request; a second
// request with the same id fails naming the id instead of being judged on the first one's
// timings, even when the file holds a second record with that id.
func TestPerfLogRecordJoinsOneRequest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "performance.log")
	if err := os.WriteFile(path, []byte(perfRecordLine("dup", 1)+perfRecordLine("dup", 2)), 0o644); err != nil {
		t.Fatal(err)
	}
	p := New(path)
	if _, err := p.Wait(t.Context(), "dup", time.Second); err != nil {
		t.Fatal(err)
	}
	_, err := p.Wait(t.Context(), "dup", time.Hour) // an error at once, or the test times out
	if !errors.Is(err, errRecordJoined) || !strings.Contains(err.Error(), `request_id "dup"`) {
		t.Errorf("second request with the same id: %v", err)
	}
}

// TestPerfLogOutputRecordJoinsItsRequest: SGLang names the record of an expanded request
// "<id>:<i>" (entrypoints/utils.expand_request_outputs, MiniMax-H3 with n > 1); request <id>
// joins the record of its lowest-numbered output, whatever order they were written in, and a
// record named exactly <id> wins over them.
func TestPerfLogOutputRecordJoinsItsRequest(t *testing.T) {
	for _, tc := range []struct {
		name, log string
		wantMs    float64
	}{
		{"output 0 only", perfRecordLine("req:0", 10), 10},
		{"outputs out of order", perfRecordLine("req:1", 11) + perfRecordLine("req:0", 10), 10},
		{"exact id wins", perfRecordLine("req:0", 10) + perfRecordLine("req", 7), 7},
		{"another request's outputs are not it", perfRecordLine("req2:0", 5) + perfRecordLine("req:3", 13), 13},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "performance.log")
			if err := os.WriteFile(path, []byte(tc.log), 0o644); err != nil {
				t.Fatal(err)
			}
			rec, err := New(path).Wait(t.Context(), "req", time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if rec.TotalDurationMs != tc.wantMs {
				t.Errorf("joined the record of %s (total %g ms), want total %g ms", rec.RequestID, rec.TotalDurationMs, tc.wantMs)
			}
		})
	}
}

// TestPerfLogRereadsFileRewrittenToItsOldSize: a performance.log truncated and
// written again to exactly the size already read has the same size and the same inode; its
// changed content is noticed and it is read again from 0.
func TestPerfLogRereadsFileRewrittenToItsOldSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "performance.log")
	p := New(path)
	old := perfRecordLine("req-a", 1) + perfRecordLine("req-b", 2)
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(t.Context(), "req-b", time.Second); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	rewritten := perfRecordLine("req-c", 3) + perfRecordLine("req-d", 4)
	if len(rewritten) != len(old) {
		t.Fatalf("test setup: %d bytes rewritten, want %d", len(rewritten), len(old))
	}
	if _, err := f.WriteString(rewritten); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"req-c", "req-d"} {
		if _, err := p.Wait(t.Context(), id, time.Second); err != nil {
			t.Errorf("after a rewrite to the old size: %v", err)
		}
	}
}

// TestPerfLogCutRecordDoesNotHideTheNext: a record cut short without its
// newline (a server killed while writing it) runs into the next record on one line; the
// next record is found, and the cut one is malformed for its own request.
func TestPerfLogCutRecordDoesNotHideTheNext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "performance.log")
	cut := perfRecordLine("req-cut", 1)[:40]
	if err := os.WriteFile(path, []byte(cut+perfRecordLine("req-next", 2)), 0o644); err != nil {
		t.Fatal(err)
	}
	p := New(path)
	rec, err := p.Wait(t.Context(), "req-next", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if rec.TotalDurationMs != 2 {
		t.Errorf("next record: total %g, want 2", rec.TotalDurationMs)
	}
	_, err = p.Wait(t.Context(), "req-cut", time.Hour)
	var me *MalformedRecordError
	if !errors.As(err, &me) || me.RequestID != "req-cut" {
		t.Errorf("cut record: %v, want it malformed for req-cut", err)
	}
}

// Rule: a perf record with an impossible value names every such field, so that perf.record
// fails on it. Source: PR #39206 ("Fail on missing, non-finite or non-positive
// measurements"); the non-finite ones never parse (TestParseLine).
func TestImpossibleRecordValues(t *testing.T) {
	rec, err := ParseLine(
		[]byte(
			`{"request_id": "r", "total_duration_ms": -12.5, "steps": [1.0, -2.0], "stages": [{"name": "DenoisingStage", "execution_time_ms": -1.0}, ` +
				`{"name": "DecodingStage", "execution_time_ms": 0.0}],
 "memory_snapshots": {"runtime_peak": {"peak_reserved_mb": -3.5, "peak_allocated_mb": 100.0}}}`,
		),
	)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"total_duration_ms = -12.5",
		"steps[1] = -2",
		"stages[0] (DenoisingStage).execution_time_ms = -1",
		"memory_snapshots.runtime_peak.peak_reserved_mb = -3.5",
	}
	if diff := cmp.Diff(want, rec.Impossible()); diff != "" {
		t.Errorf("impossible values (-want +got):\n%s", diff)
	}
	good, err := ParseLine(
		[]byte(`{"request_id": "r", "total_duration_ms": 12.5, "steps": [1.0], "stages": [{"name": "DecodingStage", "execution_time_ms": 0.0}]}`))
	if err != nil || good.Impossible() != nil {
		t.Errorf("plausible record: %v, %v", good.Impossible(), err)
	}
}
