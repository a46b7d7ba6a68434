package strictdecode

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestErrorNamesFileLineAndField: the one format of a problem, with the parts that are known.
func TestErrorNamesFileLineAndField(t *testing.T) {
	for _, tc := range []struct {
		err  Error
		want string
	}{
		{Error{File: "suite.yaml", Line: 14, Field: "cases[2].repeat", Msg: "must be ≥ 1, got 0"}, "suite.yaml:14: cases[2].repeat: must be ≥ 1, got 0"},
		{Error{File: "h100.json", Line: 2, Msg: "invalid JSON: invalid character ','"}, "h100.json:2: invalid JSON: invalid character ','"},
		{Error{File: "known.yaml", Field: "known_failures", Msg: "missing"}, "known.yaml: known_failures: missing"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.err, got, tc.want)
		}
	}
}

// TestProblemsInLineOrderOnce: Err lists the problems as they appear in the file, a problem
// recorded twice (an anchor reached through two aliases) once, and each is an *Error.
func TestProblemsInLineOrderOnce(t *testing.T) {
	p := Problems{File: "f.yaml"}
	if p.Err() != nil {
		t.Fatal("no problems, but an error")
	}
	p.Addf(9, "b", "late")
	p.Addf(2, "a", "early %d", 1)
	p.Addf(9, "b", "late")
	p.Addf(5, "", "middle")
	err := p.Err()
	want := "f.yaml:2: a: early 1\nf.yaml:5: middle\nf.yaml:9: b: late"
	if err == nil || err.Error() != want {
		t.Fatalf("Err() = %v, want\n%s", err, want)
	}
	var e *Error
	if !errors.As(err, &e) || e.Line != 2 {
		t.Errorf("errors.As: %+v", e)
	}
	if p.Len() != 4 {
		t.Errorf("Len() = %d, want every problem recorded (4)", p.Len())
	}
}

// TestDocumentReadsOneDocumentStrictly: one document, an empty one as the caller says, the
// line of a syntax error, and aliases that cannot blow up.
func TestDocumentReadsOneDocumentStrictly(t *testing.T) {
	// Six levels of ten aliases each: 10^6 nodes written in six lines.
	bomb := "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n"
	for i := 1; i <= 5; i++ {
		prev := fmt.Sprintf("*l%d", i-1)
		bomb += fmt.Sprintf("l%d: &l%d [%s]\n", i, i, strings.Repeat(prev+", ", 9)+prev)
	}
	for _, tc := range []struct {
		name, data, empty string
		want              string // "" for a document and no problem
	}{
		{"a mapping", "a: 1\n", "", ""},
		{"empty, allowed", "", "", "<nil>"},
		{"empty, refused", "# nothing\n", "empty file; want cases", "f.yaml:1: empty file; want cases"},
		{"two documents", "a: 1\n---\nb: 2\n", "", "f.yaml:2: a second YAML document; a test file holds one"},
		{"syntax", "a: [1, 2\nb: 3\n", "", "f.yaml:2: invalid YAML: did not find expected ',' or ']'"},
		{"alias bomb", bomb, "", "f.yaml:1: the file's aliases expand to more than 100000 YAML nodes"},
	} {
		y := &YAML{Problems: Problems{File: "f.yaml"}}
		root := y.Document([]byte(tc.data), "a test file", tc.empty)
		got := ""
		if err := y.Err(); err != nil {
			got = err.Error()
		} else if root == nil {
			got = "<nil>"
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

// TestEntriesRefusesDuplicateKeys: a key written twice is a problem naming both lines; merge
// keys are expanded, the keys written in the mapping winning.
func TestEntriesRefusesDuplicateKeys(t *testing.T) {
	y := &YAML{Problems: Problems{File: "f.yaml"}}
	root := y.Document([]byte("base: &b {x: 1, y: 2}\nm:\n  <<: *b\n  y: 3\n  z: 4\n  z: 5\n"), "a test file", "")
	es, ok := y.Entries(root, "")
	if !ok || len(es) != 2 {
		t.Fatalf("top level: %v %v", es, ok)
	}
	m, _ := y.Entries(es[1].Val, "m")
	var got []string
	for _, e := range m {
		got = append(got, e.Name+"="+Deref(e.Val).Value)
	}
	if diff := cmp.Diff([]string{"y=3", "z=4", "x=1"}, got); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	if err := y.Err(); err == nil || err.Error() != "f.yaml:6: m.z: duplicate key, first at line 5" {
		t.Errorf("duplicate: %v", err)
	}
}
