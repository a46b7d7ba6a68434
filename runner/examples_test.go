package runner

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/baselines"
	"github.com/diffusion-check/diffusion-check/plan"
	"github.com/diffusion-check/diffusion-check/suite"
)

// TestSGLangExamples loads the real-world example suites with their SGLang-format baseline and
// threshold files, and plans them from the baselines' estimates.
func TestSGLangExamples(t *testing.T) {
	for _, tc := range []struct {
		file  string
		cases int
	}{{"h100.yaml", 2}, {"5090.yaml", 1}} {
		path := filepath.Join("..", "examples", "sglang", tc.file)
		s, err := suite.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := baselines.ThresholdsFor(s.Thresholds, s.GPU); err != nil {
			t.Errorf("%s: thresholds: %v", tc.file, err)
		}
		if p, err := baselines.Find(s.Baselines, s.GPU); err != nil {
			t.Errorf("%s: %v", tc.file, err)
		} else if _, err := baselines.Load(p); err != nil {
			t.Errorf("%s: perf baselines: %v", tc.file, err)
		}
		items, err := plan.SuiteItems(s, "extra", "")
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if len(items) != tc.cases {
			t.Errorf("%s: %d cases, want %d", tc.file, len(items), tc.cases)
		}
		for _, it := range items {
			if it.Source != "baseline" {
				t.Errorf("%s: case %s estimated from %s, want the baseline file", tc.file, it.Case, it.Source)
			}
		}
	}
}

// sglangServeFlags are the `sglang serve` flags the examples use, each checked against
// SGLang's source (the file that defines it). A flag not in this list is a flag nobody
// checked: `--vae-layerwise-offload`, say, which SGLang does not have.
var sglangServeFlags = map[string]string{
	"--model-type":                    "python/sglang/cli/serve_backends.py",
	"--model-path":                    "python/sglang/multimodal_gen/runtime/server_args/server_args.py",
	"--port":                          "python/sglang/multimodal_gen/runtime/server_args/server_args.py",
	"--num-gpus":                      "python/sglang/multimodal_gen/runtime/server_args/server_args.py",
	"--model-variant":                 "python/sglang/multimodal_gen/runtime/server_args/server_args.py",
	"--performance-mode":              "python/sglang/multimodal_gen/runtime/server_args/server_args.py",
	"--layerwise-offload-components":  "python/sglang/multimodal_gen/runtime/server_args/server_args.py",
	"--layerwise-resident-layers":     "python/sglang/multimodal_gen/runtime/server_args/server_args.py",
	"--dit-layerwise-resident-layers": "python/sglang/multimodal_gen/runtime/server_args/server_args.py",
	// The flags of SGLang's MiniMax-H3 cases (test/server/gpu_cases.py) and of its harness
	// (test_server_common.py, test_server_utils.py).
	"--log-level":                           "python/sglang/multimodal_gen/runtime/server_args/server_args.py",
	"--tp-size":                             "python/sglang/multimodal_gen/runtime/server_args/server_args.py",
	"--ulysses-degree":                      "python/sglang/multimodal_gen/runtime/server_args/server_args.py",
	"--strict-ports":                        "python/sglang/multimodal_gen/runtime/server_args/server_args.py",
	"--revision":                            "python/sglang/multimodal_gen/runtime/server_args/server_args.py",
	"--component-residency":                 "python/sglang/multimodal_gen/runtime/server_args/server_args.py",
	"--dit-offload-prefetch-size":           "python/sglang/multimodal_gen/runtime/server_args/server_args.py",
	"--enable-torch-compile":                "python/sglang/multimodal_gen/runtime/server_args/server_args.py",
	"--uvicorn-access-log-exclude-prefixes": "python/sglang/multimodal_gen/runtime/server_args/server_args.py",
}

// sglangEnv are the environment variables the examples set, from SGLang's envs.py, and
// PyTorch's allocator setting that SGLang's 5090 consumer-budget case sets
// (gpu_cases.py _make_5090_h3_consumer_budget_case, pandalee99/sglang @ cce0a1244).
var sglangEnv = []string{
	"SGLANG_DIFFUSION_STAGE_LOGGING",
	"SGLANG_DIFFUSION_TEST_CAP_DEVICE_MEMORY_GIB",
	"SGLANG_DIFFUSION_TEST_FORCE_HOST_AVAILABLE_GIB",
	"PYTORCH_CUDA_ALLOC_CONF",
}

func TestSGLangExampleFlagsAreReal(t *testing.T) {
	for _, file := range []string{"h100.yaml", "5090.yaml"} {
		s, err := suite.Load(filepath.Join("..", "examples", "sglang", file))
		if err != nil {
			t.Fatal(err)
		}
		for name, srv := range s.Servers {
			for _, a := range srv.Command {
				name, _, _ := strings.Cut(a, "=") // --log-level=debug
				if strings.HasPrefix(a, "--") && sglangServeFlags[name] == "" {
					t.Errorf("%s: server %s: %s is not a checked SGLang server argument", file, name, a)
				}
			}
			for k := range srv.Env {
				if !slices.Contains(sglangEnv, k) {
					t.Errorf("%s: server %s: env %s is not a checked SGLang variable", file, name, k)
				}
			}
		}
	}
}
