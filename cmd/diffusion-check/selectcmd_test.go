package main

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
			if exitCode(err) != exitUsage {
				t.Errorf("exit code %d, want %d", exitCode(err), exitUsage)
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
	if _, err := readChanged("-", big); err == nil || !strings.Contains(err.Error(), "more than 16 MiB") {
		t.Fatalf("err = %v, want the size limit", err)
	}
}

func TestActionArgsSelect(t *testing.T) {
	for _, tc := range []struct {
		command string
		inputs  map[string]string
		want    []string
		err     string
	}{
		{"plan", map[string]string{"suite": "s.yaml", "partitions": "2", "select": "auto"}, []string{"--suite=s.yaml", "--partitions=2", "--changed-in-pr"}, ""},
		{"plan", map[string]string{"suite": "s.yaml", "partitions": "2", "select": "all"}, []string{"--suite=s.yaml", "--partitions=2"}, ""},
		{"plan", map[string]string{"suite": "s.yaml", "select": "some"}, nil, `input select: want all or auto, got "some"`},
		{"run", map[string]string{"suite": "s.yaml", "select": "auto"}, nil, "give this run step the plan step's plan file"},
		{"run", map[string]string{"suite": "s.yaml", "select": "auto", "plan": "p.json"}, []string{"--suite=s.yaml", "--plan=p.json"}, ""},
	} {
		got, err := actionArgs(tc.command, func(k string) string { return tc.inputs[k] })
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s %v: err = %v, want %q", tc.command, tc.inputs, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s %v (-want +got):\n%s", tc.command, tc.inputs, diff)
		}
	}
}
