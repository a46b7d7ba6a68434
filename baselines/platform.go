package baselines

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The variables by which SGLang's harness chooses the platform of its perf baseline and its
// consistency thresholds files instead of the GPU's compute capability
// (testcase_configs.py get_perf_baseline_platform, test_utils.py get_consistency_platform,
// pandalee99/sglang @ cce0a1244, 2026-08-23).
const (
	PerfPlatformEnv        = "SGLANG_DIFFUSION_PERF_BASELINE_PLATFORM"
	ConsistencyPlatformEnv = "SGLANG_DIFFUSION_CONSISTENCY_PLATFORM"
)

// platformAliases is SGLang's PERF_BASELINE_PLATFORM_ALIASES (and the equal
// CONSISTENCY_PLATFORM_ALIASES): every name a platform may be given by, after
// normalizePlatform, to the platform whose file (<platform>.json) applies.
var platformAliases = map[string]string{
	"sm90": "h100", "hopper": "h100", "h100": "h100",
	"sm100": "b200", "blackwell": "b200", "b200": "b200",
	"sm120": "5090", "rtx5090": "5090", "5090": "5090",
}

// normalizePlatform is SGLang's _normalize_perf_baseline_platform: lower case, without "_"
// and "-", then the alias table; false for a name it does not know.
func normalizePlatform(s string) (string, bool) {
	p, ok := platformAliases[normalizeName(s)]
	return p, ok
}

// platformOfCapability is SGLang's rule without an override: compute capability major 12
// (is_sm120) reads 5090.json, major 10 (is_blackwell) b200.json, anything else h100.json
// (runtime/platforms/interface.py is_sm120, is_blackwell; testcase_configs.py
// get_perf_baseline_platform).
func platformOfCapability(major int) string {
	switch major {
	case 12:
		return "5090"
	case 10:
		return "b200"
	}
	return "h100"
}

// classCapability is the compute capability major of each CUDA GPU class of gpuClasses, for
// choosing the platform from the suite's class when no GPU is visible (the plan job, a
// laptop). A class missing here (AMD, Intel) is not a CUDA class. Keys are normalized as
// normalizePlatform does.
var classCapability = map[string]int{
	"gh200": 9, "h200": 9, "h100": 9, "h800": 9, "h20": 9,
	"gb200": 10, "b200": 10, "b300": 10,
	"a100": 8, "a800": 8, "a10g": 8, "l40s": 8, "l40": 8, "l4": 8, "4090": 8, "3090": 8,
	"rtxpro6000": 12, "5090": 12, "rtx5090": 12,
}

// capabilityOf is the compute capability major of a CUDA GPU class, false for any other.
func capabilityOf(class string) (int, bool) {
	m, ok := classCapability[normalizeName(class)]
	return m, ok
}

func normalizeName(s string) string {
	return strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(strings.TrimSpace(s)))
}

// PlatformInput is what a run knows when it chooses a platform file.
type PlatformInput struct {
	// Env is the value of the kind's override variable (PerfPlatformEnv or
	// ConsistencyPlatformEnv); EnvName names it.
	Env, EnvName string
	// Class is the GPU class label (--gpu, the suite's gpu:, or detected from the GPU's name);
	// Explicit is true when --gpu or the suite named it.
	Class    string
	Explicit bool
	// Capability is the first GPU's compute capability from NVML ("9.0"); Major is 0 when no
	// GPU is visible. Device is its name, for the message.
	Major, Minor int
	Device       string
}

// Platform says which <platform>.json of a folder applies and why.
type Platform struct {
	Name string `json:"platform"`
	Why  string `json:"why"`
}

// ChoosePlatform chooses the platform file as SGLang's harness does, in this order:
//  1. the override variable, normalized by SGLang's alias table (an unknown name is an error,
//     as SGLang's ValueError);
//  2. a class named by --gpu or the suite that is one of SGLang's platform names or aliases
//     (h100, b200, 5090, sm90, blackwell, …): the explicit override of the file;
//  3. the GPU's compute capability (platformOfCapability): an H200 reads h100.json;
//  4. without a visible GPU, the class's compute capability (classCapability);
//  5. a class that is no CUDA class (mi300x, gfx1250, intel_xpu_b60) names its own file, as
//     before SGLang chose by platform.
//
// With none of these the platform is empty (Find then says that the class is unknown).
func ChoosePlatform(in PlatformInput) (Platform, error) {
	if v := strings.TrimSpace(in.Env); v != "" {
		p, ok := normalizePlatform(v)
		if !ok {
			return Platform{}, fmt.Errorf("%s=%q: want one of %s (or an alias: %s)", in.EnvName, v,
				strings.Join(slices.Sorted(maps.Keys(platformFiles())), ", "), strings.Join(slices.Sorted(maps.Keys(platformAliases)), ", "))
		}
		return Platform{p, fmt.Sprintf("%s=%s", in.EnvName, v)}, nil
	}
	class := strings.ToLower(strings.TrimSpace(in.Class))
	if p, ok := normalizePlatform(class); ok && in.Explicit {
		return Platform{p, fmt.Sprintf("gpu %s names SGLang's platform %s", class, p)}, nil
	}
	if in.Major > 0 {
		p := platformOfCapability(in.Major)
		return Platform{p, fmt.Sprintf("compute capability %d.%d (%s) reads %s.json, as SGLang's harness chooses", in.Major, in.Minor,
			cmp.Or(in.Device, "GPU 0"), p)}, nil
	}
	if major, ok := capabilityOf(class); ok {
		p := platformOfCapability(major)
		return Platform{p, fmt.Sprintf("no GPU visible: class %s has compute capability %d.x, which reads %s.json", class, major, p)}, nil
	}
	if class != "" {
		return Platform{class, fmt.Sprintf("class %s is not a CUDA class SGLang chooses a platform for: its own %s.json", class, class)}, nil
	}
	return Platform{}, nil
}

// platformFiles is SGLang's PERF_BASELINE_FILE_BY_PLATFORM, as a set.
func platformFiles() map[string]bool {
	out := map[string]bool{}
	for _, p := range platformAliases {
		out[p] = true
	}
	return out
}
