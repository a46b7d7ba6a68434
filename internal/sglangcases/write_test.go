package sglangcases

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/suite"
	"github.com/google/go-cmp/cmp"
)

// reg is a registry of one list of cases, each decoded from the exporter's JSON form of its
// fields (the defaults of SGLang's dataclasses under them).
func reg(t *testing.T, cases ...string) *Registry {
	t.Helper()
	r := &Registry{GPUCases: "/ci/sglang/python/sglang/multimodal_gen/test/server/gpu_cases.py", Lists: []List{{Name: "ONE_GPU_CASES"}}}
	for _, c := range cases {
		var x Case
		base := `{"server_args": {"model_path": "M/m", "modality": "image", "num_gpus": 1, "extras": [], "env_vars": {}},
			"sampling_params": {"output_size": "", "prompt": "p", "seconds": 1, "num_outputs_per_prompt": 1, "extras": {}},
			"run_perf_check": true, "perf_repeat_requests": 1, "run_consistency_check": true, "run_models_api_check": true,
			"run_t2v_input_reference_check": true}`
		if err := json.Unmarshal([]byte(base), &x); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(c), &x); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		r.Lists[0].Cases = append(r.Lists[0].Cases, x)
	}
	return r
}

// written writes r and reads the suite back as diffusion-check reads a suite file.
func written(t *testing.T, r *Registry) (*suite.Suite, string) {
	t.Helper()
	out, _, err := Write(r, WriteOptions{SuiteDir: "/ci/work", Root: "/ci/sglang"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := suite.Parse(filepath.Join(t.TempDir(), "suite.yaml"), out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return s, string(out)
}

// Rule: the server command is SGLang's fixture's (test_server_common.py diffusion_server) and
// ServerManager.start's (test_server_utils.py): `sglang serve --model-path M --port P
// --log-level=debug`, then "--model-type diffusion", --num-gpus, the parallelism, offload and
// LoRA flags in the fixture's order, --strict-ports and the extras, joined and split on white
// space (an extras item of two flags is two flags), then the access-log exclusion unless the
// extras have it; a path of the checkout is relative to the suite's folder; the environment
// adds SGLANG_CACHE_DIT_ENABLED for enable_cache_dit, then env_vars. Source: pandalee99/sglang @
// cce0a1244 (2026-08-23).
func TestServerCommandAsSGLangsHarness(t *testing.T) {
	s, _ := written(t, reg(t,
		`{"id": "all", "server_args": {"model_path": "Wan-AI/Wan", "modality": "video", "num_gpus": 4, "tp_size": 2, "ulysses_degree": 2,
			"ring_degree": 1, "cfg_parallel": true, "lora_path": "a/lora", "dit_layerwise_offload": true, "dit_offload_prefetch_size": 2,
			"text_encoder_cpu_offload": true, "enable_cache_dit": true, "env_vars": {"A": "1", "SGLANG_CACHE_DIT_ENABLED": "false"},
			"extras": ["--layerwise-resident-layers text_encoder=0.8 --warmup-mode off", "--cache-dit-config",
				"/ci/sglang/python/sglang/multimodal_gen/test/server/configs/x.yaml", "--uvicorn-access-log-exclude-prefixes=/metrics"]}}`,
		`{"id": "zero_prefetch", "server_args": {"model_path": "M/m", "modality": "image", "num_gpus": 1, "dit_offload_prefetch_size": 0.0,
			"cfg_parallel": false, "extras": [], "env_vars": {}}}`,
		`{"id": "same_launch", "sampling_params": {"output_size": "", "prompt": "q", "seconds": 1, "num_outputs_per_prompt": 1, "extras": {}},
			"server_args": {"model_path": "M/m", "modality": "image", "num_gpus": 1, "dit_offload_prefetch_size": 0.0, "extras": [], "env_vars": {}}}`,
	))
	want := []string{"sglang", "serve", "--model-path", "Wan-AI/Wan", "--port", "{port}", "--log-level=debug", "--model-type", "diffusion",
		"--num-gpus", "4", "--tp-size", "2", "--ulysses-degree", "2", "--dit-layerwise-offload", "true", "--dit-offload-prefetch-size", "2",
		"--text-encoder-cpu-offload", "--ring-degree", "1", "--enable-cfg-parallel", "--lora-path", "a/lora", "--strict-ports",
		"--layerwise-resident-layers", "text_encoder=0.8", "--warmup-mode", "off", "--cache-dit-config",
		"../sglang/python/sglang/multimodal_gen/test/server/configs/x.yaml", "--uvicorn-access-log-exclude-prefixes=/metrics"}
	if diff := cmp.Diff(want, s.Servers["all"].Command); diff != "" {
		t.Errorf("command (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"A": "1", "SGLANG_CACHE_DIT_ENABLED": "false"}, s.Servers["all"].Env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	zero := []string{"sglang", "serve", "--model-path", "M/m", "--port", "{port}", "--log-level=debug", "--model-type", "diffusion",
		"--num-gpus", "1", "--strict-ports", "--uvicorn-access-log-exclude-prefixes", "/health"}
	if diff := cmp.Diff(zero, s.Servers["zero_prefetch"].Command); diff != "" {
		t.Errorf("a zero prefetch size and cfg_parallel false add nothing (-want +got):\n%s", diff)
	}
	if len(s.Servers) != 2 || s.Cases[2].Server != "zero_prefetch" || s.Servers["all"].Model != "Wan-AI/Wan" {
		t.Errorf("servers %v; the third case runs on %s, want the second's launch shared", len(s.Servers), s.Cases[2].Server)
	}
}

// Rule: the request is the one SGLang's request function for the case sends
// (test_server_utils.py get_generate_fn): T2V sends seconds (or 4), num_frames when set, no fps;
// TI2V sends fps and num_frames and the input image; TI2V by URL (direct_url_test) sends
// reference_url, fps and num_frames and none of the extras; I2V sends the image and no frames;
// an edit sends its images and num_frames in the body; a T2I case its format and n. The checks
// follow the run_*_check flags (memory with perf); the repeat, the GPUs, the lane follow the
// case and its list.
func TestRequestAsSGLangsHarness(t *testing.T) {
	s, _ := written(t, reg(t,
		`{"id": "t2v", "server_args": {"model_path": "W/w", "modality": "video", "num_gpus": 2, "extras": [], "env_vars": {}},
			"sampling_params": {"output_size": "832x480", "prompt": "r", "seconds": 0, "num_frames": 17, "fps": 16, "num_outputs_per_prompt": 1,
				"extras": {"enable_teacache": true}}, "perf_repeat_requests": 3, "perf_warmup_requests": 1, "run_perf_check": false}`,
		`{"id": "ti2v", "server_args": {"model_path": "W/w", "modality": "video", "num_gpus": 1, "extras": [], "env_vars": {}},
			"sampling_params": {"prompt": "r", "image_path": "https://x.org/a.jpg", "seconds": 2, "num_frames": 9, "fps": 8,
				"num_outputs_per_prompt": 1, "extras": {"seed": 1}}}`,
		`{"id": "ti2v_url", "server_args": {"model_path": "W/w", "modality": "video", "num_gpus": 1, "extras": [], "env_vars": {}},
			"sampling_params": {"prompt": "r", "image_path": "https://x.org/a.jpg", "direct_url_test": true, "seconds": 1, "fps": 8,
				"num_outputs_per_prompt": 1, "extras": {"seed": 1}}}`,
		`{"id": "i2v", "server_args": {"model_path": "W/w", "modality": "video", "num_gpus": 1, "extras": [], "env_vars": {}},
			"sampling_params": {"prompt": null, "image_path": "https://x.org/i.png", "seconds": 1, "num_frames": 9, "fps": 8,
				"num_outputs_per_prompt": 1, "extras": {}, "expect_audio_output": true}, "run_consistency_check": false}`,
		`{"id": "edit", "sampling_params": {"prompt": "e", "output_size": "512x512", "image_path": ["https://x.org/a.jpg", "https://x.org/b.jpg"],
			"num_frames": 4, "output_format": "png", "num_outputs_per_prompt": 2, "extras": {"seed": 0}}, "run_models_api_check": false}`,
	))
	got := map[string]suite.Case{}
	for _, c := range s.Cases {
		got[c.ID] = *c
	}
	type req struct {
		Prompt, Size, InputReference string
		Seconds, FPS, NumFrames, N   int
		Images                       []string
		Extra                        map[string]any
	}
	of := func(id string) req {
		r := got[id].Request
		return req{r.Prompt, r.Size, r.InputReference, r.Seconds, r.FPS, r.NumFrames, r.N, r.Images, r.Extra}
	}
	for id, want := range map[string]req{
		"t2v":      {Prompt: "r", Size: "832x480", Seconds: 4, NumFrames: 17, N: 1, Extra: map[string]any{"enable_teacache": true}},
		"ti2v":     {Prompt: "r", InputReference: "https://x.org/a.jpg", Seconds: 2, FPS: 8, NumFrames: 9, N: 1, Extra: map[string]any{"seed": 1}},
		"ti2v_url": {Prompt: "r", Seconds: 1, FPS: 8, N: 1, Extra: map[string]any{"reference_url": "https://x.org/a.jpg"}},
		"i2v":      {InputReference: "https://x.org/i.png", Seconds: 1, N: 1},
		"edit": {Prompt: "e", Size: "512x512", N: 2, Images: []string{"https://x.org/a.jpg", "https://x.org/b.jpg"},
			Extra: map[string]any{"num_frames": 4, "seed": 0}},
	} {
		if diff := cmp.Diff(want, of(id)); diff != "" {
			t.Errorf("%s request (-want +got):\n%s", id, diff)
		}
	}
	off := false
	for id, want := range map[string]suite.Toggles{
		"t2v":  {Perf: &off, Memory: &off},
		"i2v":  {Consistency: &off, Audio: &off},
		"edit": {ModelsAPI: &off},
	} {
		c := got[id].Checks
		if diff := cmp.Diff(want, suite.Toggles{Perf: c.Perf, Memory: c.Memory, Consistency: c.Consistency, Audio: c.Audio, ModelsAPI: c.ModelsAPI}); diff != "" {
			t.Errorf("%s checks (-want +got):\n%s", id, diff)
		}
	}
	if c := got["t2v"]; c.Repeat != 3 || c.Warmup != 1 || c.NumGPUs != 2 || c.Lane != "one_gpu" || got["i2v"].Modality != suite.VideoAudio {
		t.Errorf("t2v: repeat %d, warmup %d, gpus %d, lane %s; i2v modality %s", c.Repeat, c.Warmup, c.NumGPUs, c.Lane, got["i2v"].Modality)
	}
}

// Rule: a case diffusion-check cannot drive yet is written commented out with its reason, never
// dropped; one that SGLang's harness would skip (no prompt) says so; LoRA API checks and an
// expected model id the models check cannot see are notes above the case.
func TestCasesNotDrivenAreWrittenCommented(t *testing.T) {
	r := reg(t,
		`{"id": "mesh", "server_args": {"model_path": "t/3d", "modality": "3d", "num_gpus": 1, "extras": [], "env_vars": {}}}`,
		`{"id": "act", "server_args": {"model_path": "l/pi", "modality": "action", "num_gpus": 1, "extras": [], "env_vars": {}}, "perf_warmup_requests": 1}`,
		`{"id": "silent", "sampling_params": {"prompt": null, "seconds": 1, "num_outputs_per_prompt": 1, "extras": {}}}`,
		`{"id": "edit_url", "sampling_params": {"prompt": "e", "image_path": "https://x.org/a.jpg", "direct_url_test": true, "seconds": 1,
			"num_outputs_per_prompt": 1, "extras": {}}}`,
		`{"id": "ep", "server_args": {"model_path": "M/m", "modality": "image", "num_gpus": 1, "ep_size": 2, "extras": [], "env_vars": {}}}`,
		`{"id": "rt_events", "server_args": {"model_path": "r/t", "modality": "video", "num_gpus": 1, "extras": [], "env_vars": {}},
			"sampling_params": {"prompt": "p", "seconds": 1, "num_outputs_per_prompt": 1, "realtime_num_chunks": 4,
				"realtime_events": [{"t": 1}], "extras": {}}}`,
		`{"id": "cv", "server_args": {"model_path": "M/m", "modality": "image", "custom_validator": "video", "num_gpus": 1, "extras": [], "env_vars": {}}}`,
		`{"id": "lora", "server_args": {"model_path": "M/m", "modality": "image", "num_gpus": 1, "lora_path": "a/b", "second_lora_path": "c/d",
			"extras": [], "env_vars": {}}, "run_lora_basic_api_check": true, "run_multi_lora_api_check": true, "expected_model_id": "served"}`,
		`{"id": "dyn", "server_args": {"model_path": "M/m", "modality": "image", "num_gpus": 1, "dynamic_lora_path": "c/l", "extras": [],
			"env_vars": {}}, "run_lora_dynamic_load_check": true}`,
	)
	out, sum, err := Write(r, WriteOptions{SuiteDir: "/ci/work", Root: "/ci/sglang"})
	if err != nil {
		t.Fatal(err)
	}
	wantKinds := map[string]int{kindMesh: 1, kindAction: 1, kindNoPrompt: 1, kindURLEdit: 1, kindEPSize: 1, kindRealtime: 1,
		kindBadValue: 1}
	if diff := cmp.Diff(wantKinds, sum.Commented); diff != "" || sum.Cases != 2 {
		t.Errorf("commented kinds (-want +got):\n%s\ncases %d, want 2", diff, sum.Cases)
	}
	text := string(out)
	for _, want := range []string{
		"  # - id: mesh\n", "  # not driven by diffusion-check yet: modality 3d",
		"  # not driven by diffusion-check yet: it has no prompt, and SGLang's harness skips such a case (pytest.skip)",
		"    lora: {second_path: c/d, basic_api: true, multi_lora: true}\n",
		"  - id: dyn\n", "    lora: {dynamic_path: c/l, dynamic_load: true}\n",
		"    expected_model_id: served\n",
		"  - id: lora\n", "--lora-path, a/b",
		"  # not driven by diffusion-check yet: custom_validator \"video\" on a case of modality image",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the suite lacks %q:\n%s", want, text)
		}
	}
	s, err := suite.Parse(filepath.Join(t.TempDir(), "suite.yaml"), out)
	if err != nil || len(s.Cases) != 2 || !suite.Enabled(s.Cases[0].Checks.ModelsAPI) || s.Cases[0].ExpectedModelID != "served" {
		t.Fatalf("the suite reads as two cases, the first with models_api on, expecting the model id served: %v", err)
	}
	want := []*suite.LoRA{
		{Path: "a/b", SecondPath: "c/d", BasicAPI: true, Multi: true},
		{DynamicPath: "c/l", DynamicLoad: true},
	}
	for i, w := range want {
		if diff := cmp.Diff(w, s.Cases[i].LoRA); diff != "" {
			t.Errorf("case %s's lora (-want +got):\n%s", s.Cases[i].ID, diff)
		}
	}
}

// A case in two lists is written once, under the first; the same id with other fields in two
// lists is an error naming both.
func TestCaseInTwoLists(t *testing.T) {
	r := reg(t, `{"id": "a"}`)
	r.Lists = append(r.Lists, List{Name: "ONE_GPU_5090_CASES", Cases: r.Lists[0].Cases})
	if _, sum, err := Write(r, WriteOptions{SuiteDir: "/ci/work", Root: "/ci/sglang"}); err != nil || sum.Cases != 1 {
		t.Errorf("the same case twice: %d cases, %v", sum.Cases, err)
	}
	other := reg(t, `{"id": "a", "perf_repeat_requests": 2}`)
	r.Lists[1].Cases = other.Lists[0].Cases
	if _, _, err := Write(r, WriteOptions{SuiteDir: "/ci/work", Root: "/ci/sglang"}); err == nil ||
		!strings.Contains(err.Error(), "case a is in ONE_GPU_CASES and in ONE_GPU_5090_CASES with other fields") {
		t.Errorf("the same id, other fields: %v", err)
	}
}

// A path of SGLang's checkout, alone or inside a command-line token, is written relative to the
// suite's folder; any other path or URL as it is.
func TestPathsOfTheCheckout(t *testing.T) {
	w := &writer{o: WriteOptions{Root: "/ci/sglang"}, rootRel: "../sglang"}
	for in, want := range map[string]string{
		"/ci/sglang/python/in.png": "../sglang/python/in.png", "https://x.org/a.png": "https://x.org/a.png", "/elsewhere/a.png": "/elsewhere/a.png",
		"/ci/sglang-other/a.png": "/ci/sglang-other/a.png",
	} {
		if got := w.relPath(in); got != want {
			t.Errorf("relPath(%q) = %q, want %q", in, got, want)
		}
	}
	if got := w.inTree("--cache-dit-config=/ci/sglang/python/c.yaml"); got != "--cache-dit-config=../sglang/python/c.yaml" {
		t.Errorf("inTree: %q", got)
	}
}

// Rule: a case's dynamic_batching_requests become its dynamic_batching block, each request as
// the smoke sends it (generate_image_response: prompt, size, output format, the extras in the
// body), on the server whose extras start it with --batching-max-size 2.
func TestDynamicBatchingRequests(t *testing.T) {
	s, _ := written(t, reg(t,
		`{"id": "bagel_t2i", "server_args": {"model_path": "B/b", "modality": "image", "num_gpus": 1, "extras": ["--batching-max-size 2"], "env_vars": {}},
			"sampling_params": {"prompt": "main", "output_size": "64x64", "num_outputs_per_prompt": 1, "extras": {}},
			"dynamic_batching_requests": [
				{"prompt": "prompt-a", "output_size": "64x64", "output_format": "png", "num_outputs_per_prompt": 1, "extras": {"seed": 11}},
				{"prompt": "a longer prompt-b", "output_size": "64x64", "output_format": "png", "num_outputs_per_prompt": 1, "extras": {"seed": 22}}]}`))
	b := s.Cases[0].Batching
	if b == nil {
		t.Fatal("no dynamic_batching block")
	}
	for i, want := range []suite.Request{
		{Prompt: "prompt-a", Size: "64x64", Width: 64, Height: 64, OutputFormat: "png", Extra: map[string]any{"seed": 11}},
		{Prompt: "a longer prompt-b", Size: "64x64", Width: 64, Height: 64, OutputFormat: "png", Extra: map[string]any{"seed": 22}},
	} {
		got := b.Requests[i]
		got.N = 0
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("request %d (-want +got):\n%s", i+1, diff)
		}
	}
}
