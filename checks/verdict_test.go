package checks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHelpers(t *testing.T) {
	got := []Check{
		Passed(ServerAlive, "200 OK"),
		Failed(OutputValid, "truncated PNG"),
		Errored(PerfRecord, "read performance.log: permission denied"),
		Skipped("consistency.ssim", "no ground truth"),
	}
	want := []Check{
		{Name: ServerAlive, Status: Pass, Detail: "200 OK"},
		{Name: OutputValid, Status: Fail, Detail: "truncated PNG"},
		{Name: PerfRecord, Status: Error, Detail: "read performance.log: permission denied"},
		{Name: "consistency.ssim", Status: Skip, Detail: "no ground truth"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("helpers (-want +got):\n%s", diff)
	}
	a, b := Float(1.5), Float(1.5)
	if a == b || *a != 1.5 {
		t.Errorf("Float: want distinct pointers to 1.5, got %p=%v %p=%v", a, *a, b, *b)
	}
}
