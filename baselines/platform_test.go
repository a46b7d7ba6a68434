package baselines

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Rule: SGLang chooses its perf baseline and consistency thresholds files by platform: the
// override variable first (normalized by its alias table; an unknown name is an error), else
// compute capability major 12 → 5090, 10 → b200, anything else → h100, so an H200 reads
// h100.json. Source: pandalee99/sglang @ cce0a1244 (2026-08-23), testcase_configs.py
// get_perf_baseline_platform, _normalize_perf_baseline_platform, PERF_BASELINE_PLATFORM_ALIASES;
// test_utils.py get_consistency_platform; runtime/platforms/interface.py is_blackwell, is_sm120.
// diffusion-check's additions: a class named by --gpu or the suite that is a platform name is
// an explicit override; without a GPU the class's compute capability decides; a non-CUDA
// class keeps its own file.
func TestChoosePlatform(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   PlatformInput
		want Platform
	}{
		{"H200 by compute capability", PlatformInput{Class: "h200", Major: 9, Minor: 0, Device: "NVIDIA H200"},
			Platform{"h100", "compute capability 9.0 (NVIDIA H200) reads h100.json, as SGLang's harness chooses"}},
		{"H200 named by the suite, capability wins", PlatformInput{Class: "h200", Explicit: true, Major: 9},
			Platform{"h100", "compute capability 9.0 (GPU 0) reads h100.json, as SGLang's harness chooses"}},
		{"H200 overridden", PlatformInput{Env: "b200", EnvName: PerfPlatformEnv, Class: "h200", Major: 9},
			Platform{"b200", "SGLANG_DIFFUSION_PERF_BASELINE_PLATFORM=b200"}},
		{"alias override", PlatformInput{Env: "SM_120", EnvName: ConsistencyPlatformEnv, Major: 9},
			Platform{"5090", "SGLANG_DIFFUSION_CONSISTENCY_PLATFORM=SM_120"}},
		{"B200", PlatformInput{Major: 10, Device: "NVIDIA B200"},
			Platform{"b200", "compute capability 10.0 (NVIDIA B200) reads b200.json, as SGLang's harness chooses"}},
		{"RTX 5090", PlatformInput{Major: 12}, Platform{"5090", "compute capability 12.0 (GPU 0) reads 5090.json, as SGLang's harness chooses"}},
		{"A100 reads h100", PlatformInput{Major: 8}, Platform{"h100", "compute capability 8.0 (GPU 0) reads h100.json, as SGLang's harness chooses"}},
		{"suite names a platform", PlatformInput{Class: "h100", Explicit: true, Major: 10}, Platform{"h100", "gpu h100 names SGLang's platform h100"}},
		{"no GPU: class h200", PlatformInput{Class: "h200", Explicit: true},
			Platform{"h100", "no GPU visible: class h200 has compute capability 9.x, which reads h100.json"}},
		{"no GPU: class gb200", PlatformInput{Class: "gb200"}, Platform{"b200", "no GPU visible: class gb200 has compute capability 10.x, which reads b200.json"}},
		{"AMD class keeps its file", PlatformInput{Class: "mi300x", Explicit: true},
			Platform{"mi300x", "class mi300x is not a CUDA class SGLang chooses a platform for: its own mi300x.json"}},
		{"nothing known", PlatformInput{}, Platform{}},
	} {
		got, err := ChoosePlatform(tt.in)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
	_, err := ChoosePlatform(PlatformInput{Env: "h200", EnvName: PerfPlatformEnv})
	if err == nil || !strings.Contains(err.Error(), `SGLANG_DIFFUSION_PERF_BASELINE_PLATFORM="h200": want one of 5090, b200, h100`) {
		t.Errorf("unknown override (SGLang's ValueError): %v", err)
	}
}
