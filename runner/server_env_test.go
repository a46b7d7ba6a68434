package runner

import (
	"slices"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/internal/media"
	"github.com/diffusion-check/diffusion-check/suite"
)

// TestBuiltinServerInheritsTheProbe: a builtin server's process gets the run's ffmpeg probe
// (media.ToolsEnv), so that it does not start ffmpeg and ffprobe five times again; a server the
// suite names by its command does not, and neither does a builtin one when the run has no probe.
func TestBuiltinServerInheritsTheProbe(t *testing.T) {
	const probe = `{"ffmpeg":{}}`
	has := func(env []string) bool {
		return slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, media.ToolsEnv+"=") })
	}
	builtin := &suite.Server{Name: "ref", Builtin: &suite.Builtin{}}
	command := &suite.Server{Name: "sglang", Command: []string{"sglang", "serve"}}
	for _, tc := range []struct {
		name  string
		spec  *suite.Server
		probe string
		want  bool
	}{
		{"builtin", builtin, probe, true},
		{"builtin, no probe", builtin, "", false},
		{"command", command, probe, false},
	} {
		cmd, _ := serverCommand(tc.spec, serverEnv{mediaTools: tc.probe}, []string{"x"}, t.TempDir(), 1234)
		if got := has(cmd.Env); got != tc.want {
			t.Errorf("%s: %s in the environment: %v, want %v", tc.name, media.ToolsEnv, got, tc.want)
		}
		if tc.want && !slices.Contains(cmd.Env, media.ToolsEnv+"="+probe) {
			t.Errorf("%s: the probe is not handed down as it was", tc.name)
		}
	}
}
