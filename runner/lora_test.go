package runner

import (
	"context"
	"testing"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/results"
)

// TestLoRACheckCancelled: a step the run's cancel cut short is not a failure of the server:
// the check ends there and is cancelled, while a step that failed before the cancel still
// fails it.
func TestLoRACheckCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	lr := &loraRun{name: checks.LoRABasicAPI}
	lr.step(ctx, checks.LoRAStep{Call: "POST /v1/unmerge_lora_weights", Answer: checks.Answer{Status: 200}})
	cancel()
	lr.step(ctx, checks.LoRAStep{Generation: "after unmerge_lora_weights", Failed: "the run was cancelled"})
	if !lr.ended || len(lr.steps) != 1 {
		t.Fatalf("after the cancel: ended %v, %d steps, want ended with 1", lr.ended, len(lr.steps))
	}
	if c := checks.LoRA(lr.name, lr.steps, ctx.Err() != nil); c.Status != results.Cancelled {
		t.Errorf("cancelled mid-check: %+v, want cancelled", c)
	}

	failed := &loraRun{name: checks.LoRABasicAPI}
	failed.step(t.Context(), checks.LoRAStep{Call: "POST /v1/unmerge_lora_weights", Answer: checks.Answer{Status: 500}})
	if c := checks.LoRA(failed.name, failed.steps, true); c.Status != results.Fail {
		t.Errorf("a failed step, then a cancel: %+v, want the failure", c)
	}
}
