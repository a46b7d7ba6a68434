package main

import (
	"testing"
)

// TestGTCacheDir: the store cache is DIFFUSION_CHECK_GT_CACHE, else under the user cache of
// the XDG rule (an absolute XDG_CACHE_HOME, else ~/.cache), else none.
func TestGTCacheDir(t *testing.T) {
	for _, tc := range []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{"DIFFUSION_CHECK_GT_CACHE": "/data/gt", "XDG_CACHE_HOME": "/xdg", "HOME": "/home/u"}, "/data/gt"},
		{map[string]string{"XDG_CACHE_HOME": "/xdg", "HOME": "/home/u"}, "/xdg/diffusion-check/gt"},
		{map[string]string{"XDG_CACHE_HOME": "relative", "HOME": "/home/u"}, "/home/u/.cache/diffusion-check/gt"},
		{map[string]string{"HOME": "/home/u"}, "/home/u/.cache/diffusion-check/gt"},
		{map[string]string{}, ""},
	} {
		e := env{getenv: func(k string) string { return tc.vars[k] }}
		if got := gtCacheDir(e); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.vars, got, tc.want)
		}
	}
}
