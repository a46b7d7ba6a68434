package sglangenv

import "strings"

// StageLogging is the variable that turns on SGLang's per-request stage timers and its
// performance.log records (gpu_worker._execute_forward_common).
const StageLogging = "SGLANG_DIFFUSION_STAGE_LOGGING"

// PerfLogDir is the folder SGLang appends performance.log to.
const PerfLogDir = "SGLANG_PERF_LOG_DIR"

// Bool reads a value as SGLang's get_bool_env_var does (runtime/utils/common.py):
// case-insensitive and trimmed, "1", "true", "yes", "y", "t" and "on" are true; anything else
// (unset, "0", "off", or a value it does not understand) is false.
func Bool(value string) bool {
	switch strings.ToLower(strings.TrimSpace(value)) {
	case "1", "true", "yes", "y", "t", "on":
		return true
	}
	return false
}
