package selection

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseChanged(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		want       []string
		err        []string // substrings of the error, in order
	}{
		{"lines", "a.py\nb/c.py\n", []string{"a.py", "b/c.py"}, nil},
		{"no final newline, CRLF, blank lines, duplicates; spaces are kept", "\na.py\r\n\r\n  \nb.py\na.py\n b.py", []string{"a.py", "b.py", " b.py"}, nil},
		{"empty", "", nil, nil},
		{"names with spaces and unicode", "docs/my file.md\nüñí/ç.py\n", []string{"docs/my file.md", "üñí/ç.py"}, nil},
		{"every bad line is named", "ok.py\na\x00b\n/etc/passwd\nx/../y\nbad\xffutf8\nc\x1b[0m\n", nil, []string{
			"list:2: control character U+0000",
			`list:3: "/etc/passwd" is absolute`,
			`list:4: "x/../y" has a "." or ".." part`,
			"list:5: not UTF-8",
			"list:6: control character U+001B",
		}},
		{"a tab is a control character", "a\tb\n", nil, []string{"list:1: control character U+0009"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseChanged("list", []byte(tc.data))
			if len(tc.err) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("paths (-want +got):\n%s", diff)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error; paths %q", got)
			}
			msg := err.Error()
			for _, want := range tc.err {
				i := strings.Index(msg, want)
				if i < 0 {
					t.Fatalf("error %q lacks %q", msg, want)
				}
				msg = msg[i+len(want):]
			}
		})
	}
}

func TestReadChangedTooLong(t *testing.T) {
	big := strings.NewReader(strings.Repeat("a/b.py\n", maxChangedBytes/7+1))
	if _, err := ReadChanged("-", big); err == nil || !strings.Contains(err.Error(), "more than 16 MiB") {
		t.Fatalf("err = %v, want the size limit", err)
	}
}
