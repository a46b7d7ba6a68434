package suite

import (
	"strings"
	"testing"
)

// TestLaneNameMustBeAName: a lane name becomes a status context and a PR comment heading, so
// markup, mentions and spaces are refused at load with the line, as case ids are.
func TestLaneNameMustBeAName(t *testing.T) {
	for _, lane := range []string{`"<img src=x>"`, `"@octocat"`, `"a b"`, "'`x`'"} {
		src := "servers: {ref: {builtin: {}}}\ncases:\n  - id: a\n    server: ref\n    modality: image\n    lane: " + lane + "\n    request: {size: 8x8}\n"
		_, err := Parse("s.yaml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), "s.yaml:6: cases[0].lane: must match [A-Za-z0-9][A-Za-z0-9_.-]*") {
			t.Errorf("lane %s: err = %v", lane, err)
		}
	}
	s, err := Parse("s.yaml", []byte("servers: {ref: {builtin: {}}}\ncases:\n  - {id: a, server: ref, modality: image, lane: extra-1.x, request: {size: 8x8}}\n"))
	if err != nil || s.Cases[0].Lane != "extra-1.x" {
		t.Errorf("a good lane name: %v", err)
	}
}
