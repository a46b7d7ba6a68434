package gh

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/internal/githubfake"
)

// TestCheckGateFailsClosed: the approval environment must exist and require reviewers. A
// missing one (404; GitHub would create it on first use, with no reviewers), one that a job
// has already created that way, and one with only a wait timer fail with ErrGateOpen and
// the reason; one with reviewers passes, with notes on what weakens it; a GitHub that
// cannot be asked fails too, never passes.
func TestCheckGateFailsClosed(t *testing.T) {
	tests := []struct {
		name  string
		setup func(*githubfake.Fake)
		env   string
		want  Gate
		open  bool   // ErrGateOpen
		err   string // in the error
	}{
		{name: "missing", setup: func(*githubfake.Fake) {}, open: true,
			err: `environment "fork-gpu" does not exist in octo/diffusion, and GitHub creates a missing environment on first use with no reviewers`},
		{name: "created by a job's first use", setup: func(f *githubfake.Fake) { f.UseEnvironment("fork-gpu") }, open: true,
			err: `environment "fork-gpu" of octo/diffusion has no required reviewers (no protection rules)`},
		{name: "only a wait timer", setup: func(f *githubfake.Fake) { f.SetEnvironment("fork-gpu", githubfake.Environment{WaitTimer: 5}) }, open: true,
			err: "has no required reviewers (only wait_timer)"},
		{name: "with reviewers", setup: func(f *githubfake.Fake) {
			f.SetEnvironment("fork-gpu", githubfake.Environment{Reviewers: []string{"maintainer"}, PreventSelfReview: true, NoAdminBypass: true})
		}, want: Gate{Name: "fork-gpu", Reviewers: []string{"user maintainer"}}},
		{name: "with reviewers an admin may bypass", setup: func(f *githubfake.Fake) {
			f.SetEnvironment("fork-gpu", githubfake.Environment{Reviewers: []string{"maintainer", "octo"}})
		}, want: Gate{Name: "fork-gpu", Reviewers: []string{"user maintainer", "user octo"}, Notes: []string{
			"the person who pushed may approve their own run (Prevent self-review is off)",
			"administrators may bypass the reviewers (Allow administrators to bypass configured protection rules is on)"}}},
		{name: "a name to escape", env: "fork gpu/a100", setup: func(f *githubfake.Fake) {
			f.SetEnvironment("fork gpu/a100", githubfake.Environment{Reviewers: []string{"maintainer"}, PreventSelfReview: true, NoAdminBypass: true})
		}, want: Gate{Name: "fork gpu/a100", Reviewers: []string{"user maintainer"}}},
		{name: "token refused", setup: func(f *githubfake.Fake) {
			f.Inject(githubfake.Fault{Path: "/repos/octo/diffusion/environments/", Code: 403, Message: "Resource not accessible by integration"})
		}, err: `give the job "permissions: actions: read"; the gate is not proven, so it fails closed`},
		{name: "GitHub down", setup: func(f *githubfake.Fake) {
			f.Inject(githubfake.Fault{Path: "/repos/octo/diffusion/environments/", Code: 502, Times: 1000})
		}, err: "the gate is not proven, so it fails closed"},
		{name: "empty name", env: "-", setup: func(*githubfake.Fake) {}, err: "want 1 to 255 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, p, _ := setup(t, githubfake.Config{})
			tt.setup(f)
			name := tt.env
			switch name {
			case "":
				name = "fork-gpu"
			case "-":
				name = ""
			}
			got, err := p.CheckGate(t.Context(), name)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("CheckGate = %+v, %v; want an error with %q", got, err, tt.err)
				}
				if errors.Is(err, ErrGateOpen) != tt.open {
					t.Errorf("errors.Is(err, ErrGateOpen) = %v, want %v: %v", !tt.open, tt.open, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
