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
// Since web4hub/Sgl @ 4e66c7cc (on or after 2026-09-23) the perf side checks is_xpu() first
// (xpu_b60.json; aliases xpu, bmg); the consistency side has no XPU; an AMD GPU reads h100.json.
// diffusion-check's additions: a class named by --gpu or the suite that is a platform name is
// an explicit override; without a GPU the class's compute capability decides; a class it
// cannot place keeps its own file.
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
		{"H200 overridden", PlatformInput{Env: "b200", Kind: PlatformPerf, Class: "h200", Major: 9},
			Platform{"b200", "SGLANG_DIFFUSION_PERF_BASELINE_PLATFORM=b200"}},
		{"alias override", PlatformInput{Env: "SM_120", Kind: PlatformConsistency, Major: 9},
			Platform{"5090", "SGLANG_DIFFUSION_CONSISTENCY_PLATFORM=SM_120"}},
		{"B200", PlatformInput{Major: 10, Device: "NVIDIA B200"},
			Platform{"b200", "compute capability 10.0 (NVIDIA B200) reads b200.json, as SGLang's harness chooses"}},
		{"RTX 5090", PlatformInput{Major: 12}, Platform{"5090", "compute capability 12.0 (GPU 0) reads 5090.json, as SGLang's harness chooses"}},
		{"A100 reads h100", PlatformInput{Major: 8}, Platform{"h100", "compute capability 8.0 (GPU 0) reads h100.json, as SGLang's harness chooses"}},
		{"suite names a platform", PlatformInput{Class: "h100", Explicit: true, Major: 10}, Platform{"h100", "gpu h100 names SGLang's platform h100"}},
		{"no GPU: class h200", PlatformInput{Class: "h200", Explicit: true},
			Platform{"h100", "no GPU visible: class h200 has compute capability 9.x, which reads h100.json"}},
		{"no GPU: class gb200", PlatformInput{Class: "gb200"}, Platform{"b200", "no GPU visible: class gb200 has compute capability 10.x, which reads b200.json"}},
		{"AMD reads h100", PlatformInput{Class: "mi300x", Explicit: true},
			Platform{"h100", "class mi300x is an AMD GPU: SGLang reads h100.json on every platform but XPU, sm120 and Blackwell"}},
		{"AMD gfx thresholds", PlatformInput{Kind: PlatformConsistency, Class: "gfx1250", Explicit: true},
			Platform{"h100", "class gfx1250 is an AMD GPU: SGLang reads h100.json on every platform but XPU, sm120 and Blackwell"}},
		{"XPU class, perf", PlatformInput{Class: "intel_xpu_b60", Explicit: true},
			Platform{"xpu_b60", "class intel_xpu_b60 is an Intel XPU, which reads xpu_b60.json, as SGLang's harness chooses"}},
		{"XPU alias named by the suite", PlatformInput{Class: "bmg", Explicit: true}, Platform{"xpu_b60", "gpu bmg names SGLang's platform xpu_b60"}},
		{"XPU class, thresholds", PlatformInput{Kind: PlatformConsistency, Class: "xpu", Explicit: true},
			Platform{"h100", "class xpu is an Intel XPU: SGLang's thresholds have no XPU platform and read h100.json"}},
		{"XPU alias override", PlatformInput{Env: "XPU", Class: "h100", Major: 9}, Platform{"xpu_b60", "SGLANG_DIFFUSION_PERF_BASELINE_PLATFORM=XPU"}},
		{"unknown class without a GPU keeps its file", PlatformInput{Class: "a6000", Explicit: true},
			Platform{"a6000", "class a6000 is no GPU SGLang chooses a platform for: its own a6000.json"}},
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
	for _, tt := range []struct {
		in   PlatformInput
		want string
	}{
		{PlatformInput{Env: "h200", Kind: PlatformPerf}, `SGLANG_DIFFUSION_PERF_BASELINE_PLATFORM="h200": want one of 5090, b200, h100, xpu_b60`},
		// SGLang's own table lacks "xpub60", the normalized "xpu_b60" (its ValueError lists it).
		{PlatformInput{Env: "xpu_b60", Kind: PlatformPerf}, `SGLANG_DIFFUSION_PERF_BASELINE_PLATFORM="xpu_b60": want one of`},
		{PlatformInput{Env: "xpu", Kind: PlatformConsistency}, `SGLANG_DIFFUSION_CONSISTENCY_PLATFORM="xpu": want one of 5090, b200, h100 `},
	} {
		if _, err := ChoosePlatform(tt.in); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v (SGLang's ValueError): %v, want %q", tt.in, err, tt.want)
		}
	}
}
