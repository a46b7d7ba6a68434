package results

// Machine says where a partition ran: the Actions runner, the host, its CPU and its GPUs.
// Every field is optional: a results file written before they were recorded, or by a run
// without a driver, still reads; what could not be found is left out, and NVMLNote says why
// the GPU fields are missing.
type Machine struct {
	// Partition is the index of the partition that ran here (Result.Partition.Index), so that
	// a merged lane's Machines say which machine ran which cases.
	Partition int `json:"partition"`
	// RunnerName is the Actions runner's name (RUNNER_NAME), e.g. "b200-cirrascale3-0123":
	// the name whose prefix SGLang's runner_overrides match.
	RunnerName string `json:"runner_name,omitempty"`
	// RunnerLabels are the runner's labels, where the workflow passes them (the environment
	// of a job does not hold them; see docs/results.md).
	RunnerLabels []string `json:"runner_labels,omitempty"`
	// RunnerOS, RunnerArch and RunnerEnvironment are RUNNER_OS, RUNNER_ARCH and
	// RUNNER_ENVIRONMENT ("self-hosted" or "github-hosted").
	RunnerOS          string `json:"runner_os,omitempty"`
	RunnerArch        string `json:"runner_arch,omitempty"`
	RunnerEnvironment string `json:"runner_environment,omitempty"`
	// Hostname is the host's name as the kernel gives it.
	Hostname string `json:"hostname,omitempty"`
	// CPU is the CPU model (/proc/cpuinfo), e.g. "AMD EPYC 9654 96-Core Processor".
	CPU string `json:"cpu,omitempty"`
	// Driver and CUDA are NVML's driver version ("570.124.06") and the CUDA version the
	// driver supports ("12.8").
	Driver string `json:"driver,omitempty"`
	CUDA   string `json:"cuda,omitempty"`
	// GPUs are the GPUs NVML sees, in its index order.
	GPUs []MachineGPU `json:"gpus,omitempty"`
	// NVMLNote says why the GPU fields are missing or incomplete (no driver, a call failed).
	NVMLNote string `json:"nvml_note,omitempty"`
}

// MachineGPU is one GPU as NVML names it.
type MachineGPU struct {
	Index int    `json:"index"`
	Name  string `json:"name,omitempty"`
	UUID  string `json:"uuid,omitempty"`
}

// IsZero reports whether nothing is known about the machine (an old results file).
func (m *Machine) IsZero() bool {
	return m == nil || m.RunnerName == "" && len(m.RunnerLabels) == 0 && m.RunnerOS == "" && m.RunnerArch == "" &&
		m.RunnerEnvironment == "" && m.Hostname == "" && m.CPU == "" && m.Driver == "" && m.CUDA == "" &&
		len(m.GPUs) == 0 && m.NVMLNote == ""
}
