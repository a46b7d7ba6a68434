//go:build cgo

package nvml

import "github.com/NVIDIA/go-nvml/pkg/nvml"

// The types gpumem uses, as go-nvml declares them.
type (
	// Interface is NVML's library.
	Interface = nvml.Interface
	// Device is one GPU.
	Device = nvml.Device
	// Return is the status code of an NVML call.
	Return = nvml.Return
	// Memory is nvmlMemory_t.
	Memory = nvml.Memory
	// Memory_v2 is nvmlMemory_v2_t.
	Memory_v2 = nvml.Memory_v2
	// ProcessInfo is nvmlProcessInfo_t.
	ProcessInfo = nvml.ProcessInfo
)

// The status codes gpumem tells apart.
const (
	SUCCESS                  = nvml.SUCCESS
	ERROR_NOT_SUPPORTED      = nvml.ERROR_NOT_SUPPORTED
	ERROR_NO_PERMISSION      = nvml.ERROR_NO_PERMISSION
	ERROR_FUNCTION_NOT_FOUND = nvml.ERROR_FUNCTION_NOT_FOUND
)

// Open returns the driver's NVML library. Nothing is loaded until its Init, which fails
// (ERROR_LIBRARY_NOT_FOUND) on a machine without the driver.
func Open() (Interface, error) { return nvml.New(), nil }
