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
	perfPlatformEnv        = "SGLANG_DIFFUSION_PERF_BASELINE_PLATFORM"
	consistencyPlatformEnv = "SGLANG_DIFFUSION_CONSISTENCY_PLATFORM"
)

// PlatformKind is one of SGLang's two platform choices: the perf baseline file's
// (testcase_configs.py get_perf_baseline_platform) and the consistency thresholds file's
// (test_utils.py get_consistency_platform). They differ only in Intel's XPU, which the perf
// side knows (web4hub/Sgl @ 4e66c7cc, on or after 2026-09-23) and the consistency side does not
// (pandalee99/sglang @ cce0a1244, 2026-08-23, the newest test_utils.py readable).
type PlatformKind int

// The two kinds of platform.
const (
	PlatformPerf PlatformKind = iota
	PlatformConsistency
)

// Env is the variable that overrides the kind's platform.
func (k PlatformKind) Env() string {
	if k == PlatformPerf {
		return perfPlatformEnv
	}
	return consistencyPlatformEnv
}

// cudaAliases is SGLang's CONSISTENCY_PLATFORM_ALIASES, and the CUDA part of
// PERF_BASELINE_PLATFORM_ALIASES: every name a platform may be given by, after
// normalizePlatform, to the platform whose file (<platform>.json) applies.
var cudaAliases = map[string]string{
	"sm90": "h100", "hopper": "h100", "h100": "h100",
	"sm100": "b200", "blackwell": "b200", "b200": "b200",
	"sm120": "5090", "rtx5090": "5090", "5090": "5090",
}

// xpuPlatform is the perf platform of Intel's XPU (PERF_BASELINE_FILE_BY_PLATFORM: xpu_b60.json),
// and xpuAliases its names in PERF_BASELINE_PLATFORM_ALIASES. "xpu_b60" itself is not one: it
// normalizes to "xpub60", which SGLang's table lacks, so SGLang refuses
// SGLANG_DIFFUSION_PERF_BASELINE_PLATFORM=xpu_b60, and so does diffusion-check.
const xpuPlatform = "xpu_b60"

var xpuAliases = map[string]string{"xpu": xpuPlatform, "bmg": xpuPlatform}

// aliases is the alias table of the kind.
func (k PlatformKind) aliases() map[string]string {
	if k == PlatformConsistency {
		return cudaAliases
	}
	out := maps.Clone(cudaAliases)
	maps.Copy(out, xpuAliases)
	return out
}

// normalizePlatform is SGLang's _normalize_perf_baseline_platform (and
// _normalize_consistency_platform): lower case, without "_" and "-", then the kind's alias
// table; false for a name it does not know.
func (k PlatformKind) normalizePlatform(s string) (string, bool) {
	p, ok := k.aliases()[normalizeName(s)]
	return p, ok
}

// isXPU reports whether a GPU class is an Intel XPU, where SGLang's current_platform.is_xpu()
// is true: a class named for it ("xpu", "intel_xpu_b60") or for the Arc Pro B60 (Battlemage,
// "bmg", "b60"). NVML cannot see one; the suite's gpu: (or --gpu) says so.
func isXPU(class string) bool {
	n := normalizeName(class)
	return strings.Contains(n, "xpu") || strings.Contains(n, "b60") || n == "bmg"
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
	// Kind says which file the platform is for; Env is the value of its override variable.
	Kind PlatformKind
	Env  string
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
//  1. the kind's override variable, normalized by SGLang's alias table (an unknown name is an
//     error, as SGLang's ValueError);
//  2. a class named by --gpu or the suite that is one of SGLang's platform names or aliases
//     (h100, b200, 5090, sm90, blackwell, xpu, …): the explicit override of the file;
//  3. for the perf baseline, an Intel XPU class (is_xpu(), checked first): xpu_b60.json;
//  4. the GPU's compute capability (platformOfCapability): an H200 reads h100.json;
//  5. without a visible GPU, the class's compute capability (classCapability);
//  6. an AMD (ROCm) class, and an XPU class for the thresholds: h100.json, SGLang's platform
//     for everything that is not XPU, sm120 or Blackwell;
//  7. any other class names its own file (diffusion-check's: SGLang always knows its GPU).
//
// With none of these the platform is empty (Find then says that the class is unknown).
func ChoosePlatform(in PlatformInput) (Platform, error) {
	k := in.Kind
	if v := strings.TrimSpace(in.Env); v != "" {
		p, ok := k.normalizePlatform(v)
		if !ok {
			return Platform{}, fmt.Errorf("%s=%q: want one of %s (or an alias: %s)", k.Env(), v,
				strings.Join(slices.Sorted(maps.Keys(k.platformFiles())), ", "), strings.Join(slices.Sorted(maps.Keys(k.aliases())), ", "))
		}
		return Platform{p, fmt.Sprintf("%s=%s", k.Env(), v)}, nil
	}
	class := strings.ToLower(strings.TrimSpace(in.Class))
	if p, ok := k.normalizePlatform(class); ok && in.Explicit {
		return Platform{p, fmt.Sprintf("gpu %s names SGLang's platform %s", class, p)}, nil
	}
	if k == PlatformPerf && isXPU(class) {
		return Platform{xpuPlatform, fmt.Sprintf("class %s is an Intel XPU, which reads %s.json, as SGLang's harness chooses", class, xpuPlatform)}, nil
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
	switch {
	case ROCm(class):
		return Platform{"h100", fmt.Sprintf("class %s is an AMD GPU: SGLang reads h100.json on every platform but XPU, sm120 and Blackwell", class)}, nil
	case isXPU(class):
		return Platform{"h100", fmt.Sprintf("class %s is an Intel XPU: SGLang's thresholds have no XPU platform and read h100.json", class)}, nil
	case class != "":
		return Platform{class, fmt.Sprintf("class %s is no GPU SGLang chooses a platform for: its own %s.json", class, class)}, nil
	}
	return Platform{}, nil
}

// platformFiles is SGLang's PERF_BASELINE_FILE_BY_PLATFORM (CONSISTENCY_THRESHOLD_FILE_BY_PLATFORM),
// as a set.
func (k PlatformKind) platformFiles() map[string]bool {
	out := map[string]bool{}
	for _, p := range k.aliases() {
		out[p] = true
	}
	return out
}
