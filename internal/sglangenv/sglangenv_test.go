package sglangenv

import "testing"

// TestBoolAsSGLangReadsIt: get_bool_env_var's true values, trimmed and case-insensitive; every
// other value is false.
func TestBoolAsSGLangReadsIt(t *testing.T) {
	for v, want := range map[string]bool{"1": true, "true": true, " TRUE ": true, "Yes": true, "y": true, "t": true, "on": true,
		"": false, "0": false, "false": false, "off": false, "no": false, "2": false, "enabled": false} {
		if got := Bool(v); got != want {
			t.Errorf("Bool(%q) = %t, want %t", v, got, want)
		}
	}
}
