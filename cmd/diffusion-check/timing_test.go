package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/internal/refserver"
	"github.com/diffusion-check/diffusion-check/suite"
)

// TestBuiltinTimingsAreServeTimings: a suite's builtin server accepts exactly the timings of
// `serve --timing` (the runner passes the value on), with the same default first.
func TestBuiltinTimingsAreServeTimings(t *testing.T) {
	var serve []string
	for _, tm := range refserver.Timings() {
		serve = append(serve, tm.String())
	}
	if diff := cmp.Diff(serve, suite.BuiltinTimings()); diff != "" {
		t.Errorf("suite.BuiltinTimings() (-serve +suite):\n%s", diff)
	}
}
