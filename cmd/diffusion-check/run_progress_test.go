package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestActionsLogGroups: server lines go into a group per server start, closed before each
// progress line so that progress stays visible with the groups folded.
func TestActionsLogGroups(t *testing.T) {
	var b strings.Builder
	l := &actionsLog{w: &b}
	progress, s1, s2 := l.progress(), l.server("a: server ref log"), l.server("b: server ref log")
	fmt.Fprintln(progress, "a: starting server ref")
	fmt.Fprintln(s1, "│ loading weights")
	fmt.Fprintln(s1, "│ 10%")
	fmt.Fprintln(progress, "a: starting server ref: 20s / 20m0s; server log: 10%")
	fmt.Fprintln(s1, "│ ready")
	fmt.Fprintln(s2, "│ other server")
	l.close()
	l.close()
	want := []string{
		"a: starting server ref",
		"::group::a: server ref log",
		"│ loading weights",
		"│ 10%",
		"::endgroup::",
		"a: starting server ref: 20s / 20m0s; server log: 10%",
		"::group::a: server ref log",
		"│ ready",
		"::endgroup::",
		"::group::b: server ref log",
		"│ other server",
		"::endgroup::",
	}
	if diff := cmp.Diff(want, strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}
