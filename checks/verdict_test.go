package checks

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/results"
)

func TestHelpers(t *testing.T) {
	got := []results.Check{
		Passed(results.ServerAlive, "200 OK"),
		Failed(results.OutputValid, "truncated PNG"),
		Errored(results.PerfRecord, "read performance.log: permission denied"),
		Skipped("consistency.ssim", "no ground truth"),
	}
	want := []results.Check{
		{Name: results.ServerAlive, Status: results.Pass, Detail: "200 OK"},
		{Name: results.OutputValid, Status: results.Fail, Detail: "truncated PNG"},
		{Name: results.PerfRecord, Status: results.Error, Detail: "read performance.log: permission denied"},
		{Name: "consistency.ssim", Status: results.Skip, Detail: "no ground truth"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("helpers (-want +got):\n%s", diff)
	}
	a, b := Float(1.5), Float(1.5)
	if a == b || *a != 1.5 {
		t.Errorf("Float: want distinct pointers to 1.5, got %p=%v %p=%v", a, *a, b, *b)
	}
}
