package results

import (
	"strings"
	"testing"
)

// TestValidNameRefusesMarkup: names that would be markup, mentions, paths or workflow
// commands are refused; plain ids pass.
func TestValidNameRefusesMarkup(t *testing.T) {
	for _, s := range []string{"base", "wan2.2_t2v-a14b", "A1"} {
		if err := ValidName(s); err != nil {
			t.Errorf("ValidName(%q) = %v, want nil", s, err)
		}
	}
	for _, s := range []string{
		"", "<img src=x>", "@octocat", "[x](http://e)", "a`b", "../up", ".hidden", "-x", "a b", "::error::x", "a|b", "é", strings.Repeat("a", maxNameLen+1),
	} {
		if err := ValidName(s); err == nil {
			t.Errorf("ValidName(%q) = nil, want an error", s)
		}
	}
}
