package words

import "testing"

func TestPluralCountsTheNoun(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "0 requests"}, {1, "1 request"}, {2, "2 requests"}, {-1, "-1 requests"}} {
		if got := Plural(tc.n, "request"); got != tc.want {
			t.Errorf("Plural(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestFirstLineStopsAtTheFirstBreak(t *testing.T) {
	for in, want := range map[string]string{"": "", "one": "one", "one\ntwo": "one", "one\n": "one", "\ntwo": ""} {
		if got := FirstLine(in); got != want {
			t.Errorf("FirstLine(%q) = %q, want %q", in, got, want)
		}
	}
}
