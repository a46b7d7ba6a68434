package baselines

import "strings"

// gpuClasses maps a marker found in an NVML device name to the GPU class that names the
// baseline and threshold files (perf_baselines/<class>.json). The table is explicit on
// purpose: a new GPU must be added here, not guessed. Earlier rows win, so a longer marker
// ("H100 NVL") must come before a shorter one that it contains. Names are matched without
// letter case and with runs of spaces and dashes collapsed.
var gpuClasses = []struct{ marker, class string }{
	{"GH200", "gh200"},
	{"GB200", "gb200"},
	{"H200", "h200"},
	{"H100", "h100"},
	{"H800", "h800"},
	{"H20", "h20"},
	{"B200", "b200"},
	{"B300", "b300"},
	{"A100", "a100"},
	{"A800", "a800"},
	{"A10G", "a10g"},
	{"L40S", "l40s"},
	{"L40", "l40"},
	{"L4", "l4"},
	{"RTX PRO 6000", "rtx_pro_6000"},
	{"RTX 5090", "5090"},
	{"RTX 4090", "4090"},
	{"RTX 3090", "3090"},
	{"MI300X", "mi300x"},
	{"MI325X", "mi325x"},
	{"MI355X", "mi355x"},
}

// GPUClass returns the GPU class of an NVML (or ROCm SMI) device name such as
// "NVIDIA H100 80GB HBM3" → "h100" or "NVIDIA GeForce RTX 5090" → "5090", and false when
// the name is not in the table.
func GPUClass(deviceName string) (string, bool) {
	name := normalizeGPUName(deviceName)
	for _, g := range gpuClasses {
		if containsWord(name, normalizeGPUName(g.marker)) {
			return g.class, true
		}
	}
	return "", false
}

func normalizeGPUName(s string) string {
	s = strings.ToUpper(strings.ReplaceAll(s, "-", " "))
	return " " + strings.Join(strings.Fields(s), " ") + " "
}

// containsWord reports whether marker occurs in name as whole words: "L4" must not match
// "L40S", nor "H20" match "H200".
func containsWord(name, marker string) bool {
	return strings.Contains(name, marker)
}

// ROCm reports whether a GPU class is an AMD GPU, on which SGLang's harness runs in its AMD
// mode (test_server_utils.py @ dd8c5849af99, under current_platform.is_hip()): every perf
// tolerance is 1.0 and a limit only warns. AMD classes are the Instinct names ("mi300x",
// "mi355x") and gfx targets ("gfx1250", as SGLang names a thresholds file). The suite's
// gpu: (or --gpu) says which class a run is; NVML cannot see an AMD GPU.
func ROCm(gpuClass string) bool {
	c := strings.ToLower(strings.TrimSpace(gpuClass))
	switch {
	case strings.HasPrefix(c, "gfx"):
		return len(c) > 3 && c[3] >= '0' && c[3] <= '9'
	case strings.HasPrefix(c, "mi"):
		return len(c) > 2 && c[2] >= '0' && c[2] <= '9'
	}
	return false
}
