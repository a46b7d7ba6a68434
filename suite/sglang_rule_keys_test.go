package suite

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Rule: retry is at most SGLang's six retries of a failed item, inherited suite → server →
// case like confirm. Source: run_pytest (max_retries = 6) in SGLang's
// test/runner/pytest_runner.py, PR #39206.
func TestRetryKeyRule(t *testing.T) {
	const src = "run_pytest max_retries = 6, pytest_runner.py (PR #39206)"
	s, err := Parse("suite.yaml", []byte(`retry: 6
servers:
  ref: {builtin: {}}
  none: {builtin: {}, retry: 0}
cases:
  - {id: a, server: ref, modality: image, request: {size: 8x8}}
  - {id: b, server: none, modality: image, request: {size: 8x8}}
  - {id: c, server: none, modality: image, request: {size: 8x8}, retry: 2}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, c := range s.Cases {
		got[c.ID] = c.Noise.Retry
	}
	if diff := cmp.Diff(map[string]int{"a": 6, "b": 0, "c": 2}, got); diff != "" {
		t.Errorf("%s: retry (-want +got):\n%s", src, diff)
	}
	for _, tt := range []struct{ value, want string }{
		{"7", "suite.yaml:1: retry: must be ≤ 6 (SGLang's most retries of a failed case), got 7"},
		{"-1", "suite.yaml:1: retry: must not be negative, got -1"},
	} {
		_, err := Parse("suite.yaml",
			[]byte("retry: "+tt.value+"\nservers: {ref: {builtin: {}}}\ncases:\n  - {id: a, server: ref, modality: image, request: {size: 8x8}}\n"))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("retry: %s (%s): %v, want %q", tt.value, src, err, tt.want)
		}
	}
}

// Rule: a 3-D mesh case and an action case, which SGLang checks by Chamfer distance and by
// action JSON, are refused at load with a message that says so. Source: DiffusionServerArgs
// modality ("image", "video", "3d", "action"), testcase_configs.py @ a7ec6b97f786;
// MeshValidator and validate_mesh_correctness, test_server_utils.py; _validate_action_consistency,
// test_server_common.py.
func TestUnsupportedModalityRule(t *testing.T) {
	const src = "DiffusionServerArgs.modality, testcase_configs.py @ a7ec6b97f786"
	for _, tt := range []struct{ modality, want string }{
		{"3d", `suite.yaml:3: cases[0].modality: modality "3d": 3-D mesh cases are not supported (SGLang checks them by Chamfer distance`},
		{"mesh", `modality "mesh": 3-D mesh cases are not supported`},
		{"action", `suite.yaml:3: cases[0].modality: modality "action": action cases are not supported (SGLang checks their action JSON`},
		{"audio", `unknown modality "audio" (known: image, video, video+audio, text)`},
	} {
		_, err := Parse("suite.yaml",
			[]byte("servers: {ref: {builtin: {}}}\ncases:\n  - {id: a, server: ref, modality: "+tt.modality+", request: {size: 8x8}}\n"))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("modality %s (%s): %v, want %q", tt.modality, src, err, tt.want)
		}
	}
}

// Rule: checks.ground_truth_required is the per-case opt-out of SGLang's "GT not found"
// failure; unset means required. Source: _validate_consistency, test_server_common.py @
// a7ec6b97f786.
func TestGroundTruthRequiredKey(t *testing.T) {
	s, err := Parse("suite.yaml", []byte(`servers: {ref: {builtin: {}}}
cases:
  - {id: a, server: ref, modality: image, request: {size: 8x8}}
  - {id: b, server: ref, modality: image, request: {size: 8x8}, checks: {ground_truth_required: false}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if !Enabled(s.Cases[0].Checks.GroundTruthRequired) || Enabled(s.Cases[1].Checks.GroundTruthRequired) {
		t.Errorf("ground_truth_required: a %v, b %v; want required by default, b opted out", s.Cases[0].Checks.GroundTruthRequired,
			s.Cases[1].Checks.GroundTruthRequired)
	}
}
