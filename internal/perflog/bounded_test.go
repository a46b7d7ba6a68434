package perflog

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// foreignRecord is a record of another client's request, as SGLang writes one (about 130
// bytes, the size of the hostile-input trial's records).
func foreignRecord(i int) string {
	return fmt.Sprintf(`{"request_id": "f%035d", "tag": "pipeline_stage_metrics", "steps": [1.5, 2.5], "total_duration_ms": 4.0}`, i) + "\n"
}

// writeForeign writes n foreign records, then the given lines, to a new performance.log.
func writeForeign(t testing.TB, n int, after ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "performance.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for i := range n {
		if _, err := w.WriteString(foreignRecord(i)); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range after {
		if _, err := w.WriteString(l); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPerfLogKeepsOnlyTheNewestUnclaimedRecords: however many records of
// other requests the log holds, what is kept stays within its bounds; a request's record
// written after them is found, and one written before all of them is dropped with them, its
// request told why.
func TestPerfLogKeepsOnlyTheNewestUnclaimedRecords(t *testing.T) {
	path := writeForeign(t, 20000, perfRecordLine("ours", 7))
	p := New(path)
	p.maxKeep, p.maxKeepN = 64<<10, 100
	rec, err := p.Wait(t.Context(), "ours", time.Second)
	if err != nil || rec.TotalDurationMs != 7 {
		t.Fatalf("our record after 20,000 foreign ones: %+v, %v", rec, err)
	}
	if n := len(p.kept); n > 100 || p.keptBytes > 64<<10 || len(p.byID) > 100 {
		t.Errorf("keeping %d records (%d bytes, %d indexed), want at most 100 within 64 KiB", n, p.keptBytes, len(p.byID))
	}
	if p.dropped != 20000-99 {
		t.Errorf("dropped %d, want %d", p.dropped, 20000-99)
	}

	path = writeForeign(t, 0, perfRecordLine("early", 1))
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 500 {
		if _, err := f.WriteString(foreignRecord(i)); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	p = New(path)
	p.maxKeep, p.maxKeepN = 64<<10, 100
	_, err = p.Wait(t.Context(), "early", 0)
	if !errors.Is(err, errNoRecord) || !strings.Contains(err.Error(), "401 older records of other requests were dropped unread") {
		t.Errorf("a record dropped with the foreign ones: %v", err)
	}
}

// TestPerfLogNamesACutRecord: a record whose first half was written and
// whose end never came is named as cut short, where and how long, not "no record".
func TestPerfLogNamesACutRecord(t *testing.T) {
	line := perfRecordLine("req-half", 3)
	path := writeForeign(t, 3, line[:len(line)/2])
	_, err := New(path).Wait(t.Context(), "req-half", 0)
	if !errors.Is(err, errRecordCut) || !strings.Contains(err.Error(), fmt.Sprintf("performance.log:4 holds %d bytes of it and no end of line", len(line)/2)) {
		t.Errorf("half a record: %v", err)
	}
	// Another request's half record is not this one's.
	if _, err := New(path).Wait(t.Context(), "req-other", 0); !errors.Is(err, errNoRecord) {
		t.Errorf("another request: %v, want no record", err)
	}
}

// anchorDecodeAll is the way performance.log was once read: every record decoded
// (ParseLine) and kept in a map by request id, whoever it belongs to. It is the named anchor
// BenchmarkForeignRecords measures the Log against.
func anchorDecodeAll(path, id string) (Record, map[string]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return Record{}, nil, err
	}
	defer f.Close()
	records := map[string]Record{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 256<<10), maxLine)
	for sc.Scan() {
		if rec, err := ParseLine(sc.Bytes()); err == nil {
			records[rec.RequestID] = rec
		}
	}
	return records[id], records, sc.Err()
}

// BenchmarkForeignRecords: a performance.log of 1.5 million records of
// other requests, then this request's; the time to find it from a cold start, and the heap
// the reader still holds afterwards, for the Log and for the anchor (anchorDecodeAll), with
// the ratios. Run it with
// -benchtime=1x.
func BenchmarkForeignRecords(b *testing.B) {
	const foreign = 1_500_000
	path := writeForeign(b, foreign, perfRecordLine("ours", 9))
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%d foreign records, %.0f MB", foreign, float64(fi.Size())/1e6)
	// CPU time (user and system, all threads, the GC's included) as well as wall time: on a
	// loaded machine the wall time says more about the other processes.
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			b.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	var logCPU, anchorCPU time.Duration
	measure := func(read func() (any, error)) (time.Duration, float64, float64) {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start, startCPU := time.Now(), cpu()
		held, err := read()
		d := time.Since(start)
		spent := cpu() - startCPU
		if _, ok := held.(*Log); ok {
			logCPU += spent
		} else {
			anchorCPU += spent
		}
		if err != nil {
			b.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		allocMB := float64(after.TotalAlloc-before.TotalAlloc) / 1e6
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(held)
		return d, float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / 1e6, allocMB
	}
	var logT, anchorT time.Duration
	var logMB, anchorMB, logAlloc, anchorAlloc float64
	for range b.N {
		d, mb, al := measure(func() (any, error) {
			p := New(path)
			rec, err := p.Wait(b.Context(), "ours", 0)
			if err == nil && rec.TotalDurationMs != 9 {
				err = fmt.Errorf("joined %+v", rec)
			}
			return p, err
		})
		logT, logMB, logAlloc = logT+d, mb, al
		d, mb, al = measure(func() (any, error) {
			rec, all, err := anchorDecodeAll(path, "ours")
			if err == nil && rec.TotalDurationMs != 9 {
				err = fmt.Errorf("anchor joined %+v", rec)
			}
			return all, err
		})
		anchorT, anchorMB, anchorAlloc = anchorT+d, mb, al
	}
	n := float64(b.N)
	b.ReportMetric(logT.Seconds()/n, "log-s")
	b.ReportMetric(anchorT.Seconds()/n, "anchor-s")
	b.ReportMetric(logMB, "log-held-MB")
	b.ReportMetric(anchorMB, "anchor-held-MB")
	b.ReportMetric(logAlloc, "log-alloc-MB")
	b.ReportMetric(anchorAlloc, "anchor-alloc-MB")
	b.ReportMetric(anchorT.Seconds()/logT.Seconds(), "time-ratio-anchor/log")
	b.ReportMetric(logCPU.Seconds()/n, "log-cpu-s")
	b.ReportMetric(anchorCPU.Seconds()/n, "anchor-cpu-s")
	b.ReportMetric(anchorCPU.Seconds()/logCPU.Seconds(), "cpu-ratio-anchor/log")
	b.ReportMetric(anchorMB/max(logMB, 0.001), "held-ratio-anchor/log")
}
