package untrusted

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestVisible(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text\nwith lines\tand tabs", "plain text\nwith lines\tand tabs"},
		{"deploy \u202eDEXIF\u202c ok", `deploy \u202eDEXIF\u202c ok`},
		{"a\u2066b\u2067c\u2068d\u2069e", `a\u2066b\u2067c\u2068d\u2069e`},
		{"nul\x00esc\x1b[31mred", `nul\x00esc\x1b[31mred`},
		{"line\u2028sep\u2029para", `line\u2028sep\u2029para`},
		{"cr\rdel\x7fnel\u0085", `cr\x0ddel\x7fnel\u0085`},
		{"lrm\u200e rlm\u200f alm\u061c", `lrm\u200e rlm\u200f alm\u061c`},
		{"bad \xff utf-8", `bad \xff utf-8`},
		{"ünïcödé ✅ 日本", "ünïcödé ✅ 日本"},
	} {
		if got := Visible(tc.in); got != tc.want {
			t.Errorf("Visible(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// commandLike reports whether the GitHub runner would read line as a workflow command: the
// "::" syntax after leading white space (TryParseV2), or "##[" anywhere (TryParse), with the
// zero-width characters a culture-sensitive comparison skips taken out first.
func commandLike(line string) bool {
	var b strings.Builder
	for _, r := range line {
		if !ignorable(r) {
			b.WriteRune(r)
		}
	}
	s := b.String()
	return strings.HasPrefix(strings.TrimLeft(s, " \t\u00a0\u3000\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u1680\v\f"),
		"::") || strings.Contains(s, "##[")
}

func TestWriterNoLineIsACommand(t *testing.T) {
	hostile := []string{
		"##[add-mask]secret",
		"│ ##[error file=x]forged",
		"text ##[set-output name=a;]b",
		"::add-mask::x",
		"   ::error::forged",
		"\u00a0\u3000::warning::x",
		"\u200b::add-mask::zero-width first",
		"#\u200b#[add-mask]zero-width between",
		"##\ufeff[add-mask]bom before the bracket",
		"\t::stop-commands::tok",
	}
	for _, in := range hostile {
		// Every split of the input into two writes: the escaping works on the stream.
		for cut := 0; cut <= len(in); cut++ {
			var out bytes.Buffer
			w := NewWriter(&out)
			if _, err := w.Write([]byte(in[:cut])); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write([]byte(in[cut:] + "\n")); err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(out.String(), "\n") {
				if commandLike(line) {
					t.Errorf("%q split at %d: line %q is a workflow command", in, cut, line)
				}
			}
		}
	}
}

func TestWriterKeepsOrdinaryText(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	in := "case a request 1/2: pass 1.2s\n│ INFO: Uvicorn running on http://127.0.0.1:30000\n# a heading ## two [x]\n"
	for _, part := range []string{in[:7], in[7:40], in[40:]} {
		if _, err := w.Write([]byte(part)); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(in, out.String()); diff != "" {
		t.Errorf("ordinary text changed (-want +got):\n%s", diff)
	}
	// A character split across writes arrives whole.
	out.Reset()
	e := []byte("é\u202e")
	for i := range e {
		if _, err := w.Write(e[i : i+1]); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := out.String(), `é\u202e`; got != want {
		t.Errorf("split characters: got %q, want %q", got, want)
	}
	if Raw(w) != &out {
		t.Error("Raw(w) is not the stream under it")
	}
}

// TestWriterKeepsJSONValid: JSON printed through a Writer (plan's matrix, select's file list:
// a pull request names the files) stays valid JSON of the same value, though "##[" and a
// bidi override are escaped.
func TestWriterKeepsJSONValid(t *testing.T) {
	in := map[string]any{"files": []string{"##[add-mask]x.py", "deploy \u202eDEXIF\u202c ok", "nul\x00 esc\x1b ls\u2028"}}
	b, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := NewWriter(&out).Write(b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "##[") || strings.ContainsRune(out.String(), 0x202e) {
		t.Errorf("not escaped: %s", out.String())
	}
	var back map[string]any
	if err := json.Unmarshal(out.Bytes(), &back); err != nil {
		t.Fatalf("not JSON any more: %v\n%s", err, out.String())
	}
	if diff := cmp.Diff(map[string]any{"files": []any{"##[add-mask]x.py", "deploy \u202eDEXIF\u202c ok", "nul\x00 esc\x1b ls\u2028"}}, back); diff != "" {
		t.Errorf("another value (-want +got):\n%s", diff)
	}
}
