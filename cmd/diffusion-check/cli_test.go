package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/results"
)

func TestReorderIntersperses(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.String("markdown", "", "")
	fs.Bool("publish", false, "")
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"flags first", []string{"--markdown", "x.md", "res"}, []string{"--markdown", "x.md", "--", "res"}},
		{"flag after a positional", []string{"res", "--markdown", "x.md"}, []string{"--markdown", "x.md", "--", "res"}},
		{"flag=value between positionals", []string{"a", "--markdown=x.md", "b"}, []string{"--markdown=x.md", "--", "a", "b"}},
		{"bool takes no value", []string{"--publish", "res"}, []string{"--publish", "--", "res"}},
		{"single dash", []string{"res", "-publish", "-markdown", "x.md"}, []string{"-publish", "-markdown", "x.md", "--", "res"}},
		{"-- ends the flags", []string{"a", "--", "--publish", "-"}, []string{"--", "a", "--publish", "-"}},
		{"value that looks like --", []string{"--markdown", "--", "res"}, []string{"--markdown", "--", "--", "res"}},
		{"unknown flag stays a flag", []string{"res", "--nope"}, []string{"--nope", "--", "res"}},
		{"stdin dash is positional", []string{"-", "--publish"}, []string{"--publish", "--", "-"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, reorder(fs, tc.args)); diff != "" {
				t.Errorf("reorder(%q) (-want +got):\n%s", tc.args, diff)
			}
		})
	}
}

// cli runs a command line in process and returns its exit code, stdout and stderr.
func cli(t *testing.T, getenv func(string) string, args ...string) (int, string, string) {
	t.Helper()
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), args, getenv, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestHelpAndVersion(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		code       int
		stdout     string // regexp
		stderrNone bool
	}{
		{[]string{"help"}, 0, `(?s)^usage: diffusion-check <command>.*\n  run +--suite FILE`, true},
		{[]string{"--help"}, 0, `^usage: diffusion-check <command>`, true},
		{[]string{"help", "run"}, 0, `(?s)^usage: diffusion-check run --suite FILE.*--mode MODE\n.*--partition I/N\n`, true},
		{[]string{"run", "-h"}, 0, `(?s)^usage: diffusion-check run --suite FILE.*--heartbeat duration`, true},
		{[]string{"report", "--help"}, 0, `(?s)^usage: diffusion-check report .*--comment MODE`, true},
		{[]string{"help", "compare"}, 0, `(?s)--min-ssim X.*--case ID`, true},
		{[]string{"-version"}, 0, `(?s)^diffusion-check \S.*\nssim kernel: (portable|avx2|avx512) `, true},
		{[]string{"--version"}, 0, `(?s)^diffusion-check \S.*\nssim kernel: (portable|avx2|avx512) `, true},
		{[]string{"version"}, 0, `(?s)^diffusion-check \S.*\nssim kernel: (portable|avx2|avx512) `, true},
		{[]string{"help", "frobnicate"}, 2, `^$`, false},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := cli(t, nil, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.code, stderr)
			}
			if !regexp.MustCompile(tc.stdout).MatchString(stdout) {
				t.Errorf("stdout does not match %q:\n%s", tc.stdout, stdout)
			}
			if tc.stderrNone && stderr != "" {
				t.Errorf("stderr not empty:\n%s", stderr)
			}
			if n := strings.Count(stdout+stderr, "usage: diffusion-check"); n > 1 {
				t.Errorf("usage printed %d times", n)
			}
		})
	}
}

// TestFlagValueNames: the flag package takes a usage's first `quoted` word as the value's
// name, which mangled "run -h" (-mode diffusion-check baseline). Every value name is one
// upper-case word or the type's name.
func TestFlagValueNames(t *testing.T) {
	for _, c := range commands() {
		if c.name == "help" || c.name == "version" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := cli(t, nil, c.name, "-h")
			if code != 0 {
				t.Fatalf("%s -h: exit %d: %s", c.name, code, stderr)
			}
			re := regexp.MustCompile(`^  --[a-z-]+( ([A-Z][A-Z/_]*|string|int|float|duration|value))?$`)
			for line := range strings.SplitSeq(stdout, "\n") {
				if strings.HasPrefix(line, "  --") && !re.MatchString(line) {
					t.Errorf("flag line %q: value name is not one word", line)
				}
			}
		})
	}
}

// TestInterspersedFlags: a flag after a positional argument is a flag, not a file name.
func TestInterspersedFlags(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join(dir, "res")
	if err := os.MkdirAll(res, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("testdata", "script", "report_publish.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := strings.Cut(string(data), "-- pass/results.json --\n")
	body, _, _ = strings.Cut(body, "\n-- ")
	if err := os.WriteFile(filepath.Join(res, "results.json"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	md := filepath.Join(dir, "x.md")
	code, stdout, stderr := cli(t, nil, "report", res, "--markdown", md, "--summary=false")
	if code != 0 {
		t.Fatalf("report RES --markdown FILE: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "t2i") {
		t.Errorf("the table does not show case t2i:\n%s", stdout)
	}
	if b, err := os.ReadFile(md); err != nil || !strings.Contains(string(b), "t2i") {
		t.Errorf("--markdown after the results was not written: %v", err)
	}
}

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	suitePath := filepath.Join(dir, "suite.yaml")
	if err := os.WriteFile(suitePath, []byte("servers:\n  ref: {builtin: {}}\ncases:\n"+
		"  - {id: a, server: ref, modality: image, request: {prompt: a, size: 64x64}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	notADir := filepath.Join(dir, "file")
	if err := os.WriteFile(notADir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"unwritable --out could not run", []string{"run", "--suite", suitePath, "--out", filepath.Join(notADir, "out")}, 3, "not a directory"},
		{"unknown case is configuration", []string{"run", "--suite", suitePath, "--out", filepath.Join(dir, "o"), "--cases", "nope"}, 2, `case "nope": not in lane`},
		{"bad flag is usage", []string{"run", "--suite", suitePath, "--frobnicate"}, 2, "flag provided but not defined: -frobnicate"},
		{"bad mode is usage", []string{"run", "--suite", suitePath, "--mode", "fast"}, 2, `want check, baseline or gt, got "fast"`},
		{"unknown command", []string{"frobnicate"}, 2, `unknown command "frobnicate"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := cli(t, nil, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("exit %d, want %d; stderr should contain %q:\n%s", code, tc.code, tc.stderr, stderr)
			}
		})
	}
}

// TestVerdictExit: a run's status gives the documented exit code (docs/results.md).
func TestVerdictExit(t *testing.T) {
	for s, want := range map[results.Status]int{
		results.Pass: 0, results.Known: 0, results.Flaky: 0, results.Fail: 1,
		results.Error: 3, results.Cancelled: 3, results.Skip: 3, "": 3,
	} {
		if got := verdictExit(s); got != want {
			t.Errorf("verdictExit(%q) = %d, want %d", s, got, want)
		}
	}
}

// TestReadmeSynopsis: the README's synopsis is the one the program prints.
func TestReadmeSynopsis(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "## Using it\n\n```sh\n")
	if !ok {
		t.Fatal("README has no ```sh block under ## Using it")
	}
	block, _, _ := strings.Cut(after, "```")
	var got []string
	for line := range strings.SplitSeq(strings.TrimSpace(block), "\n") {
		line, _, _ = strings.Cut(line, "#")
		got = append(got, strings.Join(strings.Fields(line), " "))
	}
	var want []string
	for _, c := range commands() {
		want = append(want, strings.TrimSpace("diffusion-check "+c.name+" "+c.synopsis))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("README synopsis differs from the usage (-usage +README):\n%s", diff)
	}
}

// sharedFiles are the files of the command that belong to no one command: the entry point,
// the dispatch and its environment, and what every command prints through.
var sharedFiles = []string{"main.go", "doc.go", "cli.go", "ghenv.go", "toolkit.go", "untrusted.go", "selection.go"}

// TestFileNamesFollowOneScheme, restic's rule: each command's entry point is
// cmd_<command>.go (check-gate: cmd_check_gate.go; help lives in cli.go, the action wrapper
// in cmd_action.go), what serves one command is <command>_<concern>.go, and the few files
// every command shares are listed in sharedFiles. Tests follow the file they test or, when
// they cross files (scripts, docs), may be named for what they test.
func TestFileNamesFollowOneScheme(t *testing.T) {
	commandsOf := []string{"action"}
	for _, c := range commands() {
		if c.name != "help" {
			commandsOf = append(commandsOf, strings.ReplaceAll(c.name, "-", "_"))
		}
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range commandsOf {
		if !slices.Contains(files, "cmd_"+c+".go") {
			t.Errorf("command %s: no cmd_%s.go", c, c)
		}
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || slices.Contains(sharedFiles, f) {
			continue
		}
		base := strings.TrimPrefix(strings.TrimSuffix(f, ".go"), "cmd_")
		if !slices.ContainsFunc(commandsOf, func(c string) bool { return base == c || strings.HasPrefix(base, c+"_") }) {
			t.Errorf("%s: neither cmd_<command>.go, <command>_<concern>.go nor a shared file", f)
		}
	}
}
