//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/diffusion-check/diffusion-check/results"
)

// repeatSuite writes a suite of one case of n requests on the reference server, whose
// perf_record_timeout is far longer than any test may take: a run that waited it out would
// never finish.
func repeatSuite(t *testing.T, dir string, n int) string {
	t.Helper()
	return writeSuite(t, dir, fmt.Sprintf(`
servers:
  ref: {builtin: {step_ms: 1, load_ms: 10}, perf_record_timeout: 1h, request_timeout: 1h}
cases:
  - {id: many, server: ref, modality: image, repeat: %d, request: {prompt: a fox, size: 64x64, seed: 1, steps: 2}}
`, n))
}

// runBinary runs diffusion-check with args and returns its exit code and stderr; before
// (when set) runs just before the start, after (when set) just after it.
func runBinary(t *testing.T, before, after func(), args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "diffusion-check"), args...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if before != nil {
		before()
	}
	err := cmd.Start()
	if after != nil {
		after()
	}
	if err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, stderr.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), stderr.String()
	}
	t.Fatal(err)
	return 0, ""
}

// mountTmpfs mounts a tmpfs of size bytes at a new folder: a disk that really fills up
// (ENOSPC). It needs root and mount rights; without them the test is skipped.
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		t.Skipf("cannot mount a small tmpfs to fill (needs root): %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// TestFullDiskMidRunIsAnErrorWithEveryVerdictSaved runs 30 requests into an --out on a disk
// that fills up after a few of them (a tmpfs whose free space is measured, then filled to a
// few artifacts' worth). The requests that could not be saved are errors of the machine, not
// failures: the run is `error` (exit 3), not `fail`; no request waited out the hour-long
// perf_record_timeout (the test would not end); and every request is in results.json, which
// the reserve of space let the run write.
func TestFullDiskMidRunIsAnErrorWithEveryVerdictSaved(t *testing.T) {
	t.Parallel() // self-contained: its servers and ffmpeg run beside the others' (TestMain)
	const n = 30
	dir := t.TempDir()
	suitePath := repeatSuite(t, dir, n)
	disk := mountTmpfs(t, 4<<20)
	// A first run onto a roomy folder measures what one artifact takes.
	code, log := runBinary(t, nil, nil, "run", "--suite", suitePath, "--out", filepath.Join(dir, "roomy"))
	if code != 0 {
		t.Skipf("the reference run does not pass here (exit %d), nothing to compare with:\n%s", code, log)
	}
	artifact, err := os.Stat(filepath.Join(dir, "roomy", results.ArtifactsDir, "many", "request-1", "output.png"))
	if err != nil {
		t.Fatal(err)
	}
	// Fill the disk, leaving the reserve, the early results.json and about three artifacts.
	var st syscall.Statfs_t
	if err := syscall.Statfs(disk, &st); err != nil {
		t.Fatal(err)
	}
	free := int64(st.Bavail) * st.Bsize
	leave := int64(64<<10) + 64<<10 + 3*(artifact.Size()+4096)
	if err := os.WriteFile(filepath.Join(disk, "filler"), make([]byte, free-leave), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(disk, "out")
	code, log = runBinary(t, nil, nil, "run", "--suite", suitePath, "--out", out)
	t.Logf("run on the full disk:\n%s", log)
	if code != 3 {
		t.Errorf("exit %d on a full disk, want 3 (an error of the machine); log:\n%s", code, log)
	}
	if !strings.Contains(log, "the disk is full") {
		t.Errorf("the log does not say the disk is full:\n%s", log)
	}
	res, err := results.ReadContext(t.Context(), filepath.Join(out, results.ResultsFile))
	if err != nil {
		t.Fatalf("results.json after a full disk: %v\n%s", err, log)
	}
	if res.Incomplete != "" || res.Status != results.Error || len(res.Cases) != 1 || len(res.Cases[0].Requests) != n {
		t.Fatalf("results.json: status %s, incomplete %q, %d cases; want error, complete, every request", res.Status, res.Incomplete, len(res.Cases))
	}
	c := res.Cases[0]
	measured := 0
	for _, rr := range c.Requests {
		switch rr.Status {
		case results.Pass:
			measured++
		case results.Cancelled:
		default:
			t.Errorf("request %d/%d: %s, want pass, or cut short by the full disk; checks %+v", rr.Index, rr.Of, rr.Status, rr.Checks)
		}
	}
	if measured == 0 || measured == n {
		t.Errorf("%d of %d requests passed: the disk did not fill in the middle of the run", measured, n)
	}
	if len(c.Errors) == 0 || !strings.Contains(strings.Join(c.Errors, "\n"), "the disk is full") {
		t.Errorf("case errors %q: want the full disk named", c.Errors)
	}
}

// TestResultsNotSavedIsSaidAndReportRebuildsFromRequests makes the final results.json too
// large to write (a file size limit between the measured sizes of requests.jsonl and
// results.json of the same run): the run says NOT SAVED and exits 3, and report reads the
// partition from requests.jsonl (marked incomplete, every request there, an error) instead
// of saying its cases did not run.
func TestResultsNotSavedIsSaidAndReportRebuildsFromRequests(t *testing.T) {
	const n = 60
	dir := t.TempDir()
	suitePath := repeatSuite(t, dir, n)
	roomy := filepath.Join(dir, "roomy")
	if code, log := runBinary(t, nil, nil, "run", "--suite", suitePath, "--out", roomy); code != 0 {
		t.Skipf("the reference run does not pass here (exit %d):\n%s", code, log)
	}
	size := func(p string) int64 {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	runs, requests := size(filepath.Join(roomy, results.ResultsFile)), size(filepath.Join(roomy, results.RequestsFile))
	limit := (runs + requests) / 2
	if requests*11/10 >= limit || limit*11/10 >= runs || limit < 80<<10 {
		t.Skipf("results.json %d bytes, requests.jsonl %d: no file size limit between them with a margin", runs, requests)
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	// Only the child gets the limit: set just before it starts, restored right after.
	limited := func() {
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: uint64(limit), Max: old.Max}); err != nil {
			t.Skipf("cannot limit file sizes: %v", err)
		}
	}
	restore := func() { _ = syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old) }
	t.Cleanup(restore)
	out := filepath.Join(dir, "out")
	code, log := runBinary(t, limited, restore, "run", "--suite", suitePath, "--out", out)
	if code != 3 || !strings.Contains(log, "NOT SAVED: results.json could not be written") {
		t.Fatalf("exit %d; want 3 and NOT SAVED; log:\n%s", code, log)
	}
	if strings.Contains(log, "results.json holds every request") {
		t.Errorf("the log claims results.json holds every request:\n%s", log)
	}
	code, report := runBinary(t, nil, nil, "report", out)
	if code != 3 {
		t.Errorf("report exit %d, want 3 (incomplete is an error); output:\n%s", code, report)
	}
	for _, want := range []string{"rebuilt", "incomplete", fmt.Sprintf("%d/%d", n, n)} {
		if !strings.Contains(report, want) {
			t.Errorf("report does not say %q:\n%s", want, report)
		}
	}
	if strings.Contains(report, "did not run") {
		t.Errorf("report says cases did not run:\n%s", report)
	}
}
