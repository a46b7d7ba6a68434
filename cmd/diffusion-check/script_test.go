package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/media/mediatest"
	"github.com/diffusion-check/diffusion-check/judge"
	"github.com/diffusion-check/diffusion-check/results"
)

// binDir holds the diffusion-check binary that the scripts run. It is a real build, so that
// builtin servers are started exactly as in production: as `diffusion-check serve` children.
var binDir string

// TestMain builds the binary the tests run. The tests that start servers and ffmpeg and share
// nothing with the others (their own folders, no t.Setenv, no process-wide limit, no scan of
// every process) call t.Parallel, so that one's waits (a server loading, a video job polled)
// overlap another's work. Go starts them only once every sequential test has ended, so a test
// that sets an rlimit or looks for leftover server processes (TestSIGTERMKeepsResults) stays
// sequential and never sees theirs.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "diffusion-check-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "diffusion-check"), ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build diffusion-check:", err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// writeSuite writes a suite file into dir and returns its path.
func writeSuite(t *testing.T, dir, yaml string) string {
	t.Helper()
	p := filepath.Join(dir, "suite.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestScripts(t *testing.T) {
	t.Parallel() // self-contained: its servers and ffmpeg run beside the others' (TestMain)
	testscript.Run(t, scriptParams(t, filepath.Join("testdata", "script"), ""))
}

// TestScriptsFFmpeg4 runs the scripts of testdata/ffmpeg4 with static FFmpeg 4.x builds first
// on PATH (mediatest.FFmpeg4: fetched from the npm registry once, cached; skipped, saying why,
// when the registry cannot be reached): the oldest FFmpeg supported (media.MinRelease).
//
// Beside them run the scripts of testdata/script that decode or encode the most (ffmpeg4Too),
// unchanged: they pass with either FFmpeg.
func TestScriptsFFmpeg4(t *testing.T) {
	t.Parallel() // self-contained: its servers and ffmpeg run beside the others' (TestMain)
	p := scriptParams(t, "", mediatest.FFmpeg4(t))
	own, err := filepath.Glob(filepath.Join("testdata", "ffmpeg4", "*.txtar"))
	if err != nil || len(own) == 0 {
		t.Fatalf("no scripts in testdata/ffmpeg4: %v", err)
	}
	p.Files = own
	for _, name := range ffmpeg4Too {
		p.Files = append(p.Files, filepath.Join("testdata", "script", name+".txtar"))
	}
	testscript.Run(t, p)
}

// ffmpeg4Too are the scripts of testdata/script that TestScriptsFFmpeg4 runs with FFmpeg 4.x
// too: every kind of output (image, video, video+audio, realtime, MiniMax), corrupt media, and
// compare with and without audio.
var ffmpeg4Too = []string{
	"compare", "compare_audio", "compare_audio_limits", "consistency_audio", "consistency_drift",
	"corrupt", "realtime", "minimax_n2",
}

// scriptParams runs the scripts of dir with the binary first on PATH, and before it ffmpegDir
// when not empty.
func scriptParams(t *testing.T, dir, ffmpegDir string) testscript.Params {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return testscript.Params{
		Dir: dir,
		Setup: func(e *testscript.Env) error {
			path := binDir + string(os.PathListSeparator) + e.Getenv("PATH")
			if ffmpegDir != "" {
				path = ffmpegDir + string(os.PathListSeparator) + path
			}
			e.Setenv("PATH", path)
			e.Setenv("REPO", root)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"requests":     cmdRequests,
			"requestlines": cmdRequestLines,
			"github":       cmdGitHub,
			"exits":        cmdExits,
			"partitions":   cmdPartitions,
			"fixture":      cmdFixture,
			"httpfiles":    cmdHTTPFiles,
		},
		// [root]: the script runs as root (CI does), which may make a device node.
		Condition: func(cond string) (bool, error) {
			if cond == "root" {
				return os.Geteuid() == 0, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		RequireExplicitExec: true,
	}
}

// cmdRequests checks the request statuses of one case in a results.json, in index order:
//
//	requests out/results.json CASE pass fail skip
//
// It also checks that requests.jsonl beside it holds a line for every request that ran.
func cmdRequests(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: requests RESULTS CASE STATUS...")
	}
	res, err := results.ReadContext(context.Background(), ts.MkAbs(args[0]))
	ts.Check(err)
	var cr *results.CaseResult
	for i := range res.Cases {
		if res.Cases[i].ID == args[1] {
			cr = &res.Cases[i]
		}
	}
	if cr == nil {
		ts.Fatalf("case %s not in %s", args[1], args[0])
	}
	var got []string
	for i, rr := range cr.Requests {
		if rr.Index != i+1 || rr.Of != len(cr.Requests) {
			ts.Fatalf("case %s: request %d has index %d/%d", cr.ID, i+1, rr.Index, rr.Of)
		}
		got = append(got, string(rr.Status))
	}
	if want := args[2:]; strings.Join(got, " ") != strings.Join(want, " ") {
		ts.Fatalf("case %s: request statuses %v, want %v", cr.ID, got, want)
	}
	lines, _, err := results.ReadRequests(context.Background(), filepath.Join(filepath.Dir(ts.MkAbs(args[0])), "requests.jsonl"))
	ts.Check(err)
	for _, rr := range cr.Requests {
		// The last line of a request is its final verdict (an earlier one may be revised once
		// the case is known): it must say what results.json says.
		var last *results.RequestResult
		for i, l := range lines {
			if l.Case == cr.ID && l.Index == rr.Index && !l.Confirm {
				last = &lines[i]
			}
		}
		switch {
		case last == nil:
			ts.Fatalf("case %s request %d/%d (%s): no line in requests.jsonl", cr.ID, rr.Index, rr.Of, rr.Status)
		case last.Status != rr.Status:
			ts.Fatalf("case %s request %d/%d: its last line in requests.jsonl says %s, results.json %s", cr.ID, rr.Index, rr.Of, last.Status, rr.Status)
		}
	}
}

// cmdExits runs a command and checks its exact exit status, keeping its stdout and stderr for
// the stdout and stderr lines after it, as exec does:
//
//	exits 2 diffusion-check run --suite bad.yaml
//
// `! exec` accepts any failure; diffusion-check's exit codes are a contract (docs/results.md:
// 1 a check failed, 2 usage or configuration, 3 could not run), so a script names the one it
// expects.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE COMMAND [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits %s: want an exit code", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("%s: %v", args[1], err)
	}
	if got != want {
		ts.Fatalf("%s exited with %d, want %d", args[1], got, want)
	}
}

// cmdRequestLines checks how a case's own requests are written to requests.jsonl:
//
//	requestlines out/results.json CASE LINES
//
// The case has exactly LINES lines (confirmation requests apart); each request's first line
// is not marked revised, every later one is and says what changed; and each request's last
// line is the request of results.json, every check included (but the memory pictures drawn
// when the case ends): a line is written final.
func cmdRequestLines(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: requestlines RESULTS CASE LINES")
	}
	want, err := strconv.Atoi(args[2])
	ts.Check(err)
	res, err := results.ReadContext(context.Background(), ts.MkAbs(args[0]))
	ts.Check(err)
	lines, _, err := results.ReadRequests(context.Background(), filepath.Join(filepath.Dir(ts.MkAbs(args[0])), results.RequestsFile))
	ts.Check(err)
	last := map[int]results.RequestResult{}
	n := 0
	for _, l := range lines {
		if l.Case != args[1] || l.Confirm {
			continue
		}
		n++
		_, seen := last[l.Index]
		switch {
		case seen && (!l.Revised || l.Revision == ""):
			ts.Fatalf("case %s request %d/%d: a second line that does not say it is revised and what changed (revised %v, revision %q)", l.Case,
				l.Index, l.Of, l.Revised, l.Revision)
		case !seen && (l.Revised || l.Revision != ""):
			ts.Fatalf("case %s request %d/%d: its first line is marked revised (%q)", l.Case, l.Index, l.Of, l.Revision)
		}
		l.Revised, l.Revision = false, ""
		last[l.Index] = l
	}
	if n != want {
		ts.Fatalf("case %s: %d lines in requests.jsonl, want %d", args[1], n, want)
	}
	for _, cr := range res.Cases {
		if cr.ID != args[1] {
			continue
		}
		for _, rr := range cr.Requests {
			// A memory picture is drawn when the case ends, after its requests' lines:
			// results.json names it, the line does not.
			rr.Pictures = slices.DeleteFunc(slices.Clone(rr.Pictures), func(p results.Picture) bool { return p.Kind == results.PictureMemory })
			if len(rr.Pictures) == 0 {
				rr.Pictures = nil
			}
			if diff := cmp.Diff(rr, last[rr.Index]); diff != "" {
				ts.Fatalf("case %s request %d/%d: its last line in requests.jsonl is not its verdict in results.json (-results.json +line):\n%s",
					cr.ID, rr.Index, rr.Of, diff)
			}
		}
		return
	}
	ts.Fatalf("case %s not in %s", args[1], args[0])
}

// cmdPartitions makes the results of many partitions of one plan from one real run's:
//
//	partitions SRC DST FROM TO [SKIP...]
//
// SRC is the output folder of a run of one partition (its results.json lists the plan's
// partitions); for each partition i in [FROM, TO), except the SKIP ones, it writes
// DST/p<i>/results.json: SRC's head with partition index i, and a copy of SRC's first case
// (its requests and checks as measured) for each case the plan gives partition i. A script
// gets a 200-partition run without 200 servers.
func cmdPartitions(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 4 {
		ts.Fatalf("usage: partitions SRC DST FROM TO [SKIP...]")
	}
	src, err := results.ReadContext(context.Background(), filepath.Join(ts.MkAbs(args[0]), results.ResultsFile))
	ts.Check(err)
	if len(src.Cases) == 0 {
		ts.Fatalf("%s: no case to copy", args[0])
	}
	skip := map[int]bool{}
	for _, a := range args[4:] {
		skip[atoi(ts, a)] = true
	}
	for i := atoi(ts, args[2]); i < atoi(ts, args[3]); i++ {
		if skip[i] || i >= len(src.Planned) {
			continue
		}
		r := *src
		r.Partition.Index, r.Cases = i, nil
		for _, id := range src.Planned[i] {
			c := src.Cases[0]
			c.ID, c.Requests = id, slices.Clone(c.Requests)
			for k := range c.Requests {
				c.Requests[k].Case = id
			}
			r.Cases = append(r.Cases, c)
		}
		dir := filepath.Join(ts.MkAbs(args[1]), fmt.Sprintf("p%d", i))
		ts.Check(os.MkdirAll(dir, 0o755))
		data, err := json.MarshalIndent(&r, "", "  ")
		ts.Check(err)
		ts.Check(os.WriteFile(filepath.Join(dir, results.ResultsFile), data, 0o644))
	}
}

// cmdFixture writes a results.json of a shape too big for a real run in a script:
//
//	fixture longids N FILE   N failing cases with 100-character ids (the longest a name may be)
//	fixture noisy FILE       a case whose 55 requests all fail, each with a 40-line detail,
//	                         beside 4 failing cases with a detail of their own
//
// Every failing request fails perf.e2e (with a baseline) and output.valid with a multi-line
// detail, and its case has a 30-line server log tail, as a crash leaves; the head is the
// script's pull request head, lane base.
func cmdFixture(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: fixture longids N FILE | fixture noisy FILE")
	}
	failing := func(id string, n int, detail string) results.CaseResult {
		c := results.CaseResult{ID: id, Server: "ref", Modality: "image", WallMs: 3000}
		for k := 1; k <= 30; k++ {
			c.LogTail = append(c.LogTail, fmt.Sprintf("[worker %d] step %d/50 latency %.1f ms", k%4, k, 1020.5+float64(k)))
		}
		for i := 1; i <= n; i++ {
			e2e := results.Check{
				Name:      "perf.e2e",
				Status:    results.Fail,
				Value:     checks.Float(3100),
				Limit:     checks.Float(2500),
				Unit:      "ms",
				Baseline:  checks.Float(2000),
				Tolerance: checks.Float(0.25),
			}
			valid := checks.Failed(results.OutputValid, fmt.Sprintf("output is not decodable (request %d/%d):\n%s", i, n, detail))
			c.Requests = append(c.Requests, results.RequestResult{Index: i, Of: n, Status: results.Fail, E2EMs: 3100, Checks: []results.Check{e2e, valid}})
		}
		return c
	}
	res := results.Result{Schema: results.Schema, Suite: "ci", Lane: "base", Commit: scriptHead, Partition: results.Partition{Index: 0, Total: 1}}
	var file string
	switch args[0] {
	case "longids":
		need(ts, args, 3)
		for i := range atoi(ts, args[1]) {
			id := fmt.Sprintf("case_%04d_", i)
			res.Cases = append(res.Cases, failing(id+strings.Repeat("x", 100-len(id)), 1, strings.Repeat("frame 12: 0.81 0.82 0.83 0.84\n", 10)))
		}
		file = args[2]
	case "noisy":
		res.Cases = append(res.Cases, failing("noisy", 55, strings.Repeat("frame 12: 0.81 0.82 0.83 0.84 0.85 0.86 0.87 0.88\n", 40)))
		for k := 1; k <= 4; k++ {
			res.Cases = append(res.Cases, failing(fmt.Sprintf("other_%d", k), 1, fmt.Sprintf("the detail of other case %d\nsecond line", k)))
		}
		file = args[1]
	default:
		ts.Fatalf("fixture: unknown kind %q", args[0])
	}
	judge.Finalize(&res)
	data, err := json.MarshalIndent(&res, "", "  ")
	ts.Check(err)
	ts.Check(os.MkdirAll(filepath.Dir(ts.MkAbs(file)), 0o755))
	ts.Check(os.WriteFile(ts.MkAbs(file), data, 0o644))
}
