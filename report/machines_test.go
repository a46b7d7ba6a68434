package report

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/results"
)

func TestMachines(t *testing.T) {
	lanes := []results.Result{{Lane: "base", Machines: []results.Machine{
		{Partition: 0, RunnerName: "b200-cirrascale3-0123", RunnerLabels: []string{"b200", "self-hosted"}, Hostname: "gpu-host-7",
			CPU: "AMD EPYC 9654 96-Core Processor", Driver: "570.124.06", CUDA: "12.8",
			GPUs: []results.MachineGPU{{Index: 0, Name: "NVIDIA B200", UUID: "GPU-1a2b"}}},
		{Partition: 1, RunnerName: "evil|<!--x-->", Hostname: "@someone", NVMLNote: "nvml unavailable: no GPU"},
	}}}
	var b strings.Builder
	machines(&b, lanes)
	want := `
<details><summary>Where it ran: 2 partitions</summary>

| lane | partition | runner | host | GPU | driver / CUDA | CPU |
|---|---|---|---|---|---|---|
| base | 0 | b200-cirrascale3-0123 (b200, self-hosted) | gpu-host-7 | NVIDIA B200 ` + "`GPU-1a2b`" + ` | 570.124.06 / 12.8 | AMD EPYC 9654 96-Core Processor |
| base | 1 | evil&#124;&lt;!--x--&gt; | @` + zwsp + `someone | _nvml unavailable: no GPU_ | – | – |

</details>
`
	if d := cmp.Diff(want, b.String()); d != "" {
		t.Errorf("machines (-want +got):\n%s", d)
	}
	var none strings.Builder
	machines(&none, []results.Result{{Lane: "base"}})
	if none.Len() != 0 {
		t.Errorf("without machines: %q, want nothing", none.String())
	}
}
