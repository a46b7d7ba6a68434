package main

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNewVersionInfo(t *testing.T) {
	platform := runtime.GOOS + "/" + runtime.GOARCH
	vcs := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/diffusion-check/diffusion-check", Version: "v1.2.4-0.20261201050000-0722187abcde+dirty"},
		Settings: []debug.BuildSetting{
			{Key: "GOEXPERIMENT", Value: "simd"},
			{Key: "vcs.revision", Value: "0722187abcdef0123456789"},
			{Key: "vcs.time", Value: "2026-12-01T05:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	for name, tc := range map[string]struct {
		st   stamps
		bi   *debug.BuildInfo
		want versionInfo
	}{
		"release build: the stamps win": {
			st: stamps{"v1.2.3", "0722187abcdef0123456789", "2026-12-01T06:00:00Z"}, bi: vcs,
			want: versionInfo{Version: "v1.2.3", Commit: "0722187abcdef0123456789", Date: "2026-12-01T06:00:00Z", Go: "go1.26.8 (GOEXPERIMENT=simd)",
				Platform: platform},
		},
		"go build in a checkout: the build info": {
			bi: vcs,
			want: versionInfo{Version: "v1.2.4-0.20261201050000-0722187abcde+dirty", Commit: "0722187abcdef0123456789+dirty",
				Date: "2026-12-01T05:00:00Z (commit time; not a release build)", Go: "go1.26.8 (GOEXPERIMENT=simd)", Platform: platform},
		},
		"no VCS (a source tree without .git)": {
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			want: versionInfo{Version: "(devel)", Commit: "unknown", Date: "unknown", Go: "go1.26.8", Platform: platform},
		},
		"no build info": {
			want: versionInfo{Version: "unknown", Commit: "unknown", Date: "unknown", Go: runtime.Version(), Platform: platform},
		},
	} {
		if diff := cmp.Diff(tc.want, newVersionInfo(tc.st, tc.bi)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}

func TestVersionInfoWrite(t *testing.T) {
	v := versionInfo{Version: "v1.2.3", Commit: "0722187", Date: "2026-12-01T06:00:00Z", Go: "go1.26.8 (GOEXPERIMENT=simd)",
		Platform: "linux/amd64", NVML: "not loaded (init: ERROR_LIBRARY_NOT_FOUND)", SSIMKernel: "avx2"}
	var b strings.Builder
	if err := v.write(&b); err != nil {
		t.Fatal(err)
	}
	want := `diffusion-check v1.2.3
commit:      0722187
built:       2026-12-01T06:00:00Z
go:          go1.26.8 (GOEXPERIMENT=simd)
platform:    linux/amd64
nvml:        not loaded (init: ERROR_LIBRARY_NOT_FOUND)
ssim kernel: avx2
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("version output (-want +got):\n%s", diff)
	}
}
