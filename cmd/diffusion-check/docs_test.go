package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
	"gopkg.in/yaml.v3"

	"github.com/diffusion-check/diffusion-check/suite"
)

func readRepoFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestActionInputsAreDocumented: every input of action.yml has a row in the input table of
// docs/github-actions.md, and the table has no row for an input that is gone.
func TestActionInputsAreDocumented(t *testing.T) {
	var action struct {
		Inputs map[string]any `yaml:"inputs"`
	}
	if err := yaml.Unmarshal([]byte(readRepoFile(t, "action.yml")), &action); err != nil {
		t.Fatal(err)
	}
	var inputs []string
	for name := range action.Inputs {
		inputs = append(inputs, name)
	}
	slices.Sort(inputs)

	doc := readRepoFile(t, "docs/github-actions.md")
	_, table, ok := strings.Cut(doc, "| input | used by | default | meaning |")
	if !ok {
		t.Fatal("docs/github-actions.md: no input table (| input | used by | default | meaning |)")
	}
	var documented []string
	for _, line := range strings.Split(table, "\n")[2:] {
		if !strings.HasPrefix(line, "|") {
			break // the end of the table
		}
		first := strings.Split(line, "|")[1]
		for _, m := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(first, -1) {
			documented = append(documented, m[1])
		}
	}
	slices.Sort(documented)
	if diff := cmp.Diff(inputs, documented); diff != "" {
		t.Errorf("action.yml inputs vs the rows of docs/github-actions.md's input table (-action.yml +docs):\n%s", diff)
	}
}

// flagDocs is the doc that documents each command's flags, every one of them.
var flagDocs = map[string]string{
	"run":          "docs/results.md",
	"plan":         "docs/planning.md",
	"report":       "docs/report.md",
	"baseline":     "docs/baselines.md",
	"compare":      "docs/consistency.md",
	"serve":        "docs/reference-server.md",
	"history":      "docs/history.md",
	"check-gate":   "docs/security.md",
	"sglang-suite": "docs/sglang.md",
}

// TestCommandFlagsAreDocumented: every flag of every command (as its -h lists it) is named
// in that command's doc, so that a new flag cannot ship undocumented.
func TestCommandFlagsAreDocumented(t *testing.T) {
	for _, c := range commands() {
		if c.name == "version" || c.name == "help" || c.name == "doctor" {
			continue // no flags (doctor's doc is docs/ffmpeg.md)
		}
		doc, ok := flagDocs[c.name]
		if !ok {
			t.Errorf("command %s has no doc in flagDocs", c.name)
			continue
		}
		text := readRepoFile(t, doc)
		var stdout, stderr bytes.Buffer
		if code := run(t.Context(), []string{c.name, "-h"}, func(string) string { return "" }, &stdout, &stderr); code != exitOK {
			t.Fatalf("%s -h: exit %d: %s", c.name, code, stderr.String())
		}
		flags := regexp.MustCompile(`(?m)^  (--[a-z0-9-]+)`).FindAllStringSubmatch(stdout.String(), -1)
		if len(flags) == 0 {
			t.Errorf("%s -h lists no flags:\n%s", c.name, stdout.String())
		}
		for _, f := range flags {
			if !regexp.MustCompile(regexp.QuoteMeta(f[1]) + `\b`).MatchString(text) {
				t.Errorf("%s %s is not documented in %s", c.name, f[1], doc)
			}
		}
	}
}

// TestReadmeFirstSuiteIsTested: every command of the README's "Your first suite" recipe is
// run, as written, by the testscript first_suite.txtar.
func TestReadmeFirstSuiteIsTested(t *testing.T) {
	readme := readRepoFile(t, "README.md")
	_, section, ok := strings.Cut(readme, "\n## Your first suite\n")
	if !ok {
		t.Fatal(`README.md: no "## Your first suite" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var recipe []string
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "diffusion-check ") {
			recipe = append(recipe, line)
		}
	}
	if len(recipe) < 4 {
		t.Fatalf("the recipe has %d commands, want the 4 steps: %q", len(recipe), recipe)
	}
	ar, err := txtar.ParseFile(filepath.Join("testdata", "script", "first_suite.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	var script []string
	for _, line := range strings.Split(string(ar.Comment), "\n") {
		if cmd, ok := strings.CutPrefix(line, "exec "); ok {
			script = append(script, cmd)
		}
	}
	for _, c := range recipe {
		if !slices.Contains(script, c) {
			t.Errorf("README recipe command %q is not an exec line of first_suite.txtar", c)
		}
	}
	if !strings.Contains(section, "first_suite.txtar") {
		t.Error("the README's recipe does not say which testscript runs it")
	}
}

// TestReadmeSaysWhatTheScriptsInstall: every package the set-up and test scripts install
// (apt-get packages, go install'ed tools) is named in the README, where a newcomer reads what
// ./scripts/test will do to the machine.
func TestReadmeSaysWhatTheScriptsInstall(t *testing.T) {
	readme := readRepoFile(t, "README.md")
	var installed []string
	for _, script := range []string{"setup", "test", "lint", "cpu-levels", "build-targets", "quickstart"} {
		text := readRepoFile(t, filepath.Join("scripts", script))
		text = strings.ReplaceAll(text, "\\\n", " ")
		for _, m := range regexp.MustCompile(`missing\+=\(([^)]*)\)`).FindAllStringSubmatch(text, -1) {
			installed = append(installed, strings.Fields(m[1])...)
		}
		for _, m := range regexp.MustCompile(`apt-get install[^\n]*--no-install-recommends([^\n>]*)`).FindAllStringSubmatch(text, -1) {
			for _, w := range strings.Fields(m[1]) {
				if !strings.Contains(w, "$") {
					installed = append(installed, w)
				}
			}
		}
		for _, m := range regexp.MustCompile(`go install "?[^"\s]*/([a-z0-9-]+)@`).FindAllStringSubmatch(text, -1) {
			installed = append(installed, m[1])
		}
	}
	if len(installed) < 5 {
		t.Fatalf("found only %q installed by the scripts; the patterns no longer match them", installed)
	}
	for _, p := range installed {
		if !strings.Contains(readme, p) {
			t.Errorf("the scripts install %s; the README does not say so", p)
		}
	}
}

// TestSchemaLineNamesTheSchema: the yaml-language-server line that the docs tell people to
// put in a suite, and that the quickstart suite has, names the suite schema's $id.
func TestSchemaLineNamesTheSchema(t *testing.T) {
	line := "# yaml-language-server: $schema=" + suite.SchemaID
	for _, f := range []string{"README.md", "docs/suite.md", "examples/quickstart/suite.yaml"} {
		if !strings.Contains(readRepoFile(t, f), line) {
			t.Errorf("%s does not have the line %q", f, line)
		}
	}
}
