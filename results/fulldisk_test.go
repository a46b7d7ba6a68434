//go:build linux

package results

import (
	"encoding/json"
	"errors"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// fileSizeLimit makes every write past limit bytes of a file fail (EFBIG, after a short
// write), as a full disk does, until the returned function restores the limit.
func fileSizeLimit(t *testing.T, limit uint64) (restore func()) {
	t.Helper()
	signal.Ignore(syscall.SIGXFSZ) // else the kernel kills the process at the limit
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: limit, Max: old.Max}); err != nil {
		t.Skipf("cannot limit file sizes: %v", err)
	}
	done := false
	restore = func() {
		if !done {
			done = true
			syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old)
			signal.Reset(syscall.SIGXFSZ)
		}
	}
	t.Cleanup(restore)
	return restore
}

// TestRequestsLogNoTornLineOnFullDisk fills the "disk" in the middle of a requests.jsonl
// line: the request is reported as not saved there, the partial line is taken back, and once
// there is room again the next line is whole: the file reads back with no torn line.
func TestRequestsLogNoTornLineOnFullDisk(t *testing.T) {
	rec, dir := newTestWriter(t)
	line, _ := json.Marshal(sampleRequest("c", 1, 3))
	restore := fileSizeLimit(t, uint64(len(line)+1+len(line)/2)) // a line and a half
	if err := rec.Request(sampleRequest("c", 1, 3)); err != nil {
		t.Fatalf("request 1 fits: %v", err)
	}
	err := rec.Request(sampleRequest("c", 2, 3))
	if !errors.Is(err, syscall.EFBIG) || !strings.Contains(err.Error(), "case c request 2/3 in requests.jsonl (not saved there") {
		t.Fatalf("request 2 on a full disk: %v", err)
	}
	restore()
	if err := rec.Request(sampleRequest("c", 3, 3)); err != nil {
		t.Fatalf("request 3 after room came back: %v", err)
	}
	reqs, warnings, err := ReadRequests(t.Context(), filepath.Join(dir, RequestsFile))
	if err != nil || len(warnings) > 0 {
		t.Fatalf("requests.jsonl has a torn line: %v %v", err, warnings)
	}
	if len(reqs) != 2 || reqs[0].Index != 1 || reqs[1].Index != 3 {
		t.Errorf("read back %d requests: %+v", len(reqs), reqs)
	}
}

// TestResultsJSONWrittenFromTheReserveOnAFullDisk fills a real disk (a small tmpfs; root
// only) to the last byte after the writer started: requests.jsonl then fails, as the
// disk does, but results.json, holding every request, is written in the space reserved
// for it, and Close removes the reserve.
func TestResultsJSONWrittenFromTheReserveOnAFullDisk(t *testing.T) {
	disk := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(disk, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", disk, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("cannot mount a small tmpfs to fill (needs root): %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(disk, syscall.MNT_DETACH) })
	rec, err := NewWriter(filepath.Join(disk, "out"))
	if err != nil {
		t.Fatal(err)
	}
	filler, err := os.Create(filepath.Join(disk, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := filler.Write(make([]byte, 4096)); err != nil {
			if !IsDiskFull(err) {
				t.Fatal(err)
			}
			break
		}
	}
	filler.Close()
	res := &Result{Suite: "s", Partition: Partition{Index: 0, Total: 1}, Cases: []CaseResult{{ID: "c"}}}
	for i := 1; i <= 20; i++ {
		rr := sampleRequest("c", i, 20)
		if err := rec.Request(rr); err == nil {
			t.Fatalf("request %d written to a full disk", i)
		}
		res.Cases[0].Requests = append(res.Cases[0].Requests, rr)
	}
	if err := rec.Results(settled(res, Pass)); err != nil {
		t.Fatalf("results.json on a full disk, with the reserve: %v", err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := ReadContext(t.Context(), filepath.Join(disk, "out", ResultsFile))
	if err != nil || len(got.Cases[0].Requests) != 20 {
		t.Fatalf("results.json read back: %v", err)
	}
	if _, err := os.Stat(filepath.Join(disk, "out", reserveFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the reserve is still there after Close: %v", err)
	}
}
