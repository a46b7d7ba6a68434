package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/results"
	"github.com/rogpeppe/go-internal/testscript"
)

// binDir holds the diffusion-check binary that the scripts run. It is a real build, so that
// builtin servers are started exactly as in production: as `diffusion-check serve` children.
var binDir string

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
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("testdata", "script"),
		Setup: func(e *testscript.Env) error {
			e.Setenv("PATH", binDir+string(os.PathListSeparator)+e.Getenv("PATH"))
			e.Setenv("REPO", root)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"requests":     cmdRequests,
			"requestlines": cmdRequestLines,
			"github":       cmdGitHub,
			"exits":        cmdExits,
		},
		RequireExplicitExec: true,
	})
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
	var cr *checks.CaseResult
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
		var last *checks.RequestResult
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
// line is the request of results.json, every check included: a line is written final.
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
	last := map[int]checks.RequestResult{}
	n := 0
	for _, l := range lines {
		if l.Case != args[1] || l.Confirm {
			continue
		}
		n++
		_, seen := last[l.Index]
		switch {
		case seen && (!l.Revised || l.Revision == ""):
			ts.Fatalf("case %s request %d/%d: a second line that does not say it is revised and what changed (revised %v, revision %q)", l.Case, l.Index, l.Of, l.Revised, l.Revision)
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
			if diff := cmp.Diff(rr, last[rr.Index]); diff != "" {
				ts.Fatalf("case %s request %d/%d: its last line in requests.jsonl is not its verdict in results.json (-results.json +line):\n%s", cr.ID, rr.Index, rr.Of, diff)
			}
		}
		return
	}
	ts.Fatalf("case %s not in %s", args[1], args[0])
}
