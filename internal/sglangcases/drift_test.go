package sglangcases

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Compare reads both suites as YAML data: a comment (the header's commit) is no drift; a case
// added, removed or changed (naming its keys), a server, a top-level key and a case newly
// written commented out are.
func TestCompareReportsDrift(t *testing.T) {
	old := `# at commit aaaa
name: sglang
baselines: b
servers:
  s1: {command: [sglang, serve, --port, "{port}"], model: m}
cases:
  - {id: a, server: s1, modality: image, request: {prompt: p}}
  - {id: b, server: s1, modality: image, request: {prompt: q}}
  # - id: c
`
	d, err := Compare("suite.yaml", []byte(old), []byte(strings.Replace(old, "aaaa", "bbbb", 1)))
	if err != nil || !d.Empty() {
		t.Errorf("only the header's commit differs: %+v, %v", d, err)
	}
	now := `# at commit bbbb
name: sglang
baselines: b2
servers:
  s1: {command: [sglang, serve, --port, "{port}", --strict-ports], model: m}
cases:
  - {id: a, server: s1, modality: image, request: {prompt: p2}, checks: {perf: false}}
  - {id: d, server: s1, modality: image, request: {prompt: r}}
  # - id: b
`
	d, err = Compare("suite.yaml", []byte(old), []byte(now))
	if err != nil {
		t.Fatal(err)
	}
	want := Drift{Added: []string{"d"}, Removed: []string{"b"}, Changed: []string{"a (checks, request)"}, Servers: []string{"s1"},
		Top: []string{"baselines"}, NowCommented: []string{"b"}, NoLongerCommented: []string{"c"}}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("drift (-want +got):\n%s", diff)
	}
	if lines := d.Lines(); len(lines) != 7 || lines[0] != "cases added: d" || lines[2] != "cases changed: a (checks, request)" {
		t.Errorf("lines: %q", lines)
	}
	_, err = Compare("suite.yaml", []byte("cases: [{server: s}]"), []byte(now))
	if err == nil || !strings.Contains(err.Error(), "suite.yaml: cases[0] has no id") {
		t.Errorf("a case without id: %v", err)
	}
}
