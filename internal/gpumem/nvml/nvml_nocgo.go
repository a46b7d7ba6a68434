//go:build !cgo

package nvml

import (
	"errors"
	"strconv"
)

// ErrNoCgo is why a binary built with CGO_ENABLED=0 cannot use NVML: go-nvml binds the
// driver's library through cgo.
var ErrNoCgo = errors.New("this binary was built without cgo (CGO_ENABLED=0), so it cannot load NVML")

// Return is the status code of an NVML call; the values are NVML's.
type Return int32

// The status codes gpumem tells apart, with NVML's values.
const (
	SUCCESS                  Return = 0
	ERROR_NOT_SUPPORTED      Return = 3
	ERROR_NO_PERMISSION      Return = 4
	ERROR_FUNCTION_NOT_FOUND Return = 13
)

// Error names the code; no call returns one in a build without cgo.
func (r Return) Error() string { return "NVML return " + strconv.Itoa(int(r)) }

// Interface is the part of NVML's library that gpumem calls.
type Interface interface {
	Init() Return
	Shutdown() Return
	DeviceGetCount() (int, Return)
	DeviceGetHandleByIndex(int) (Device, Return)
	SystemGetDriverVersion() (string, Return)
	SystemGetCudaDriverVersion() (int, Return)
}

// Device is the part of a GPU's NVML handle that gpumem calls.
type Device interface {
	GetName() (string, Return)
	GetUUID() (string, Return)
	GetMemoryInfo() (Memory, Return)
	GetMemoryInfo_v2() (Memory_v2, Return)
	GetComputeRunningProcesses() ([]ProcessInfo, Return)
	GetCudaComputeCapability() (int, int, Return)
}

// Memory is nvmlMemory_t.
type Memory struct{ Total, Free, Used uint64 }

// Memory_v2 is nvmlMemory_v2_t.
type Memory_v2 struct {
	Version                     uint32
	Total, Reserved, Free, Used uint64
}

// ProcessInfo is nvmlProcessInfo_t.
type ProcessInfo struct {
	Pid                              uint32
	UsedGpuMemory                    uint64
	GpuInstanceId, ComputeInstanceId uint32
}

// Open fails: without cgo there is no way to load the driver's library.
func Open() (Interface, error) { return nil, ErrNoCgo }
