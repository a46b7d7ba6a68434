package main

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEveryDocumentedExitCodeIsScripted: the exit codes the README, docs/results.md and the
// top-level help document are the same four, and exit_codes.txtar checks each of them exactly
// (`exits N`, or exec for 0), so that no documented code is untested and no tested one
// undocumented.
func TestEveryDocumentedExitCodeIsScripted(t *testing.T) {
	codesIn := func(what, text string, re *regexp.Regexp) []string {
		var codes []string
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			if !slices.Contains(codes, m[1]) {
				codes = append(codes, m[1])
			}
		}
		slices.Sort(codes)
		if len(codes) == 0 {
			t.Errorf("%s documents no exit code", what)
		}
		return codes
	}
	_, readme, _ := strings.Cut(readRepoFile(t, "README.md"), "\nExit codes: ")
	readme, _, _ = strings.Cut(readme, "\n\n")
	documented := codesIn("README.md", readme, regexp.MustCompile("`([0-9])`"))
	_, results, _ := strings.Cut(readRepoFile(t, "docs/results.md"), "**Exit code**")
	results, _, _ = strings.Cut(results, "\n\n")
	_, help, _ := strings.Cut(usage(), "Exit codes: ")
	for _, other := range []struct{ what, text string }{{"docs/results.md", results}, {"the help", help}} {
		if diff := cmp.Diff(documented, codesIn(other.what, other.text, regexp.MustCompile(`\b([0-9]) (?:for|is|pass|a |usage|could)`))); diff != "" {
			t.Errorf("exit codes of %s (-README +%s):\n%s", other.what, other.what, diff)
		}
	}
	script := readRepoFile(t, "cmd/diffusion-check/testdata/script/exit_codes.txtar")
	sections := codesIn("exit_codes.txtar", script, regexp.MustCompile(`(?m)^# exit ([0-9]):`))
	if diff := cmp.Diff(documented, sections); diff != "" {
		t.Errorf("sections of exit_codes.txtar (-README +script):\n%s", diff)
	}
	for _, section := range strings.Split(script, "\n# exit ")[1:] {
		code, _, _ := strings.Cut(section, ":")
		body, _, _ := strings.Cut(section, "\n-- ")
		want := "\nexits " + code + " diffusion-check "
		if code == "0" {
			want = "\nexec diffusion-check "
		}
		if !strings.Contains(body, want) {
			t.Errorf("exit_codes.txtar, section exit %s: no %q", code, strings.TrimSpace(want))
		}
	}
}

// TestUsageErrorsGoToStderrOnly: a bad flag of any command is exit 2 with the error on stderr
// and nothing on stdout, which is where plan writes the JSON a workflow reads (the flag
// package would print the command's whole help there).
func TestUsageErrorsGoToStderrOnly(t *testing.T) {
	lines := [][]string{{"history", "append", "--bogus"}, {"history", "page", "--bogus"}, {"history", "tighten", "--bogus"}}
	for _, c := range commands() {
		if c.name != "version" && c.name != "help" && c.name != "history" {
			lines = append(lines, []string{c.name, "--bogus"})
		}
	}
	for _, args := range lines {
		code, stdout, stderr := cli(t, nil, args...)
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, "flag provided but not defined: -bogus") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2, nothing on stdout, the error on stderr", strings.Join(args, " "), code, stdout, stderr)
		}
	}
}
