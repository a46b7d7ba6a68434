package baselines

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/google/go-cmp/cmp"
)

func TestParseKnown(t *testing.T) {
	const file = `# known failures of the H100 lane
- case: wan2_1_t2v_1.3b
  check: perf.stage.*
  reason: VAE tiling regressed DecodingStage
  link: https://github.com/org/repo/issues/1
  until: 2026-09-30
- case: "flux_*"
  check: memory.runtime_peak
  request: 2
  reason: second request leaks 300 MiB
`
	got, err := parseKnown("known.yaml", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	want := []checks.KnownEntry{
		{
			Case:   "wan2_1_t2v_1.3b",
			Check:  "perf.stage.*",
			Reason: "VAE tiling regressed DecodingStage",
			Link:   "https://github.com/org/repo/issues/1",
			Until:  "2026-09-30",
			Source: "known.yaml:2",
		},
		{Case: "flux_*", Check: "memory.runtime_peak", Request: 2, Reason: "second request leaks 300 MiB", Source: "known.yaml:7"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// The same list under a known_failures: key.
	got2, err := parseKnown("known.yaml", []byte("known_failures:\n"+indent(file)))
	if err != nil || len(got2) != 2 {
		t.Errorf("nested: %v %v", got2, err)
	}
	if got, err := parseKnown("empty.yaml", nil); err != nil || got != nil {
		t.Errorf("empty file: %v %v", got, err)
	}
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n  ") + "\n"
}

func TestParseKnownErrors(t *testing.T) {
	const file = `- case: a
  check: perf.e2e
  reason: r
  untill: 2026-01-01
- case: b
  check: "perf.[e2e"
  request: 0
  reason: ""
  until: 30/09/2026
- check: x
  reason: r
  reason: again
- just a string
`
	_, err := parseKnown("known.yaml", []byte(file))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		"known.yaml:4: known_failures[0].untill: unknown key (known: case, check, request, reason, link, until)",
		`known.yaml:6: known_failures[1].check: want a name or glob pattern (*, ?, [..]), got "perf.[e2e"`,
		`known.yaml:7: known_failures[1].request: want a request index ≥ 1, got "0"`,
		`known.yaml:9: known_failures[1].until: want a date YYYY-MM-DD, got "30/09/2026"`,
		"known.yaml:5: known_failures[1].reason: empty",
		"known.yaml:12: known_failures[2].reason: duplicate key, first at line 11",
		"known.yaml:10: known_failures[2].case: missing",
		"known.yaml:13: known_failures[3]: want a mapping",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error:\n%v\nwant it to contain %q", err, want)
		}
	}
	if _, err := parseKnown("k.yaml", []byte("entries: []\n")); err == nil || !strings.Contains(err.Error(), "k.yaml:1: entries: unknown key") {
		t.Errorf("top-level key: %v", err)
	}
}

func FuzzParseKnown(f *testing.F) {
	f.Add([]byte("- case: a\n  check: perf.*\n  reason: r\n  until: 2026-01-01\n"))
	f.Add([]byte("known_failures:\n  - {case: a, check: b, reason: c, request: 2}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		es, err := parseKnown("fuzz.yaml", data)
		if err != nil {
			return
		}
		for _, e := range es {
			if e.Case == "" || e.Check == "" || e.Reason == "" || e.Request < 0 {
				t.Fatalf("accepted an incomplete entry %+v", e)
			}
		}
	})
}

// TestParseKnownReadsYAMLStrictly: a known-failures file is read by the suite's strict YAML
// reader (strictdecode): a syntax error and a second document are problems at their line, a
// key given twice names both lines, and an entry may come from an anchor.
func TestParseKnownReadsYAMLStrictly(t *testing.T) {
	for _, tc := range []struct {
		name, data, want string
	}{
		{"syntax", "- case: a\n  check: [perf.e2e\n", "known.yaml:2: invalid YAML: did not find expected ',' or ']'"},
		{"two documents", "[]\n---\n[]\n", "known.yaml:2: a second YAML document; a known-failures file holds one"},
		{"duplicate key", "- case: a\n  case: b\n  check: c\n  reason: r\n", "known.yaml:2: known_failures[0].case: duplicate key, first at line 1"},
		{"a list of lists", "- [a, b]\n", `known.yaml:1: known_failures[0]: want a mapping with case, check, reason, got a list`},
	} {
		_, err := parseKnown("known.yaml", []byte(tc.data))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	got, err := parseKnown("known.yaml", []byte("- &e {case: a, check: perf.e2e, reason: r}\n- *e\n"))
	if err != nil || len(got) != 2 || got[1].Case != "a" {
		t.Errorf("an entry from an anchor: %+v, %v", got, err)
	}
}

// TestKnownKeysDocumented: docs/known-failures.md shows every key of knownKeys in its example,
// in the table's order, and names the required ones, so that the docs and the decoder share
// one list.
func TestKnownKeysDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "known-failures.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	_, example, _ := strings.Cut(doc, "```yaml\n")
	example, _, _ = strings.Cut(example, "```")
	var shown []string
	for _, m := range regexp.MustCompile(`(?m)^[- ] ([a-z_]+):`).FindAllStringSubmatch(example, -1) {
		shown = append(shown, m[1])
	}
	var keys, required []string
	for _, k := range knownKeys {
		keys = append(keys, k.name)
		if k.required {
			required = append(required, "`"+k.name+"`")
		}
	}
	if diff := cmp.Diff(keys, shown); diff != "" {
		t.Errorf("the example of docs/known-failures.md shows other keys (-knownKeys +doc):\n%s", diff)
	}
	want := strings.Join(required[:len(required)-1], ", ") + " and " + required[len(required)-1] + " are required"
	if !strings.Contains(doc, want) {
		t.Errorf("docs/known-failures.md does not say %q", want)
	}
}
