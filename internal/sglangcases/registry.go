package sglangcases

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Registry is what the exporter printed: every case of the lists it read.
type Registry struct {
	// Python is the interpreter's version; GPUCases the absolute path of the gpu_cases.py it
	// imported.
	Python   string `json:"python"`
	GPUCases string `json:"gpu_cases"`
	// CIData is test_utils.py's ground-truth store pin, where it has one.
	CIData CIData `json:"ci_data"`
	// Fields are the field names of SGLang's three dataclasses, as its interpreter sees them.
	Fields map[string][]string `json:"fields"`
	Lists  []List              `json:"lists"`
}

// CIData is SGLang's pinned ground-truth store (test_utils.py SGL_TEST_FILES_CI_DATA_REPO,
// SGL_TEST_FILES_CI_DATA_REVISION, SGL_TEST_FILES_CONSISTENCY_GT_ROOT).
type CIData struct {
	Repo     string `json:"repo"`
	Revision string `json:"revision"`
	Root     string `json:"root"`
}

// List is one module-level list of gpu_cases.py. AliasOf names the list it is the same object
// as (ONE_GPU_B200_CASES = ONE_GPU_MODELOPT_NVFP4_CASES); its cases are that list's.
type List struct {
	Name    string `json:"name"`
	AliasOf string `json:"alias_of,omitempty"`
	Cases   []Case `json:"cases"`
}

// Case is SGLang's DiffusionTestCase (testcase_configs.py; web4hub/Sgl @ 4e66c7cc, on or after
// 2026-09-23, the newest read). Its json tags are the field names the decoder knows: a field
// the registry has and these structs lack fails the export, naming it.
type Case struct {
	ID                        string       `json:"id"`
	ServerArgs                CaseServer   `json:"server_args"`
	SamplingParams            CaseSampling `json:"sampling_params"`
	RunPerfCheck              bool         `json:"run_perf_check"`
	PerfRepeatRequests        int          `json:"perf_repeat_requests"`
	PerfWarmupRequests        int          `json:"perf_warmup_requests"`
	RunConsistencyCheck       bool         `json:"run_consistency_check"`
	RunComponentAccuracyCheck bool         `json:"run_component_accuracy_check"`
	RunModelsAPICheck         bool         `json:"run_models_api_check"`
	ExpectedModelID           *string      `json:"expected_model_id"`
	RunT2VInputReferenceCheck bool         `json:"run_t2v_input_reference_check"`
	RunLoraBasicAPICheck      bool         `json:"run_lora_basic_api_check"`
	RunLoraDynamicLoadCheck   bool         `json:"run_lora_dynamic_load_check"`
	RunLoraDynamicSwitchCheck bool         `json:"run_lora_dynamic_switch_check"`
	RunMultiLoraAPICheck      bool         `json:"run_multi_lora_api_check"`
	RunRevisedPromptCheck     bool         `json:"run_revised_prompt_check"`
	// DynamicBatchingRequests are the two requests of the dynamic-batching smoke (newer than
	// 4e66c7cc: test_server_common.py _test_dynamic_batching_smoke, read through the search
	// index), none for a case without it.
	DynamicBatchingRequests []CaseSampling `json:"dynamic_batching_requests"`
}

// CaseServer is SGLang's DiffusionServerArgs.
type CaseServer struct {
	ModelPath       string  `json:"model_path"`
	Modality        string  `json:"modality"`
	CustomValidator *string `json:"custom_validator"`
	NumGPUs         int     `json:"num_gpus"`
	TPSize          *int    `json:"tp_size"`
	EPSize          *int    `json:"ep_size"`
	UlyssesDegree   *int    `json:"ulysses_degree"`
	RingDegree      *int    `json:"ring_degree"`
	CFGParallel     *bool   `json:"cfg_parallel"`
	LoraPath        *string `json:"lora_path"`
	DynamicLoraPath *string `json:"dynamic_lora_path"`
	SecondLoraPath  *string `json:"second_lora_path"`
	DitLayerwise    bool    `json:"dit_layerwise_offload"`
	// DitOffloadPrefetch is the value as Python wrote it (an int or a float), so that the
	// command line shows it as SGLang's f-string does.
	DitOffloadPrefetch    json.RawMessage   `json:"dit_offload_prefetch_size"`
	EnableCacheDit        bool              `json:"enable_cache_dit"`
	TextEncoderCPUOffload bool              `json:"text_encoder_cpu_offload"`
	Extras                []string          `json:"extras"`
	EnvVars               map[string]string `json:"env_vars"`
}

// CaseSampling is SGLang's DiffusionSamplingParams.
type CaseSampling struct {
	OutputSize   string  `json:"output_size"`
	Prompt       *string `json:"prompt"`
	ImagePath    Paths   `json:"image_path"`
	Seconds      int     `json:"seconds"`
	NumFrames    *int    `json:"num_frames"`
	FPS          *int    `json:"fps"`
	DirectURL    bool    `json:"direct_url_test"`
	OutputFormat *string `json:"output_format"`
	ExpectAudio  bool    `json:"expect_audio_output"`
	NumOutputs   int     `json:"num_outputs_per_prompt"`
	// The realtime fields.
	RealtimeNumChunks      *int               `json:"realtime_num_chunks"`
	RealtimeEvents         []any              `json:"realtime_events"`
	RealtimePerfThresholds map[string]float64 `json:"realtime_perf_thresholds"`
	RealtimeIgnoreInitial  int                `json:"realtime_perf_ignore_initial_chunks"`
	RealtimeOutputFormat   *string            `json:"realtime_output_format"`
	Extras                 map[string]any     `json:"extras"`
}

// Paths is image_path: one path or URL, a list of them, or none.
type Paths []string

// UnmarshalJSON reads a string, a list of strings or null.
func (p *Paths) UnmarshalJSON(b []byte) error {
	switch {
	case bytes.Equal(b, []byte("null")):
		*p = nil
		return nil
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*p = Paths{s}
		return nil
	}
	var l []string
	if err := json.Unmarshal(b, &l); err != nil {
		return fmt.Errorf("want a path, a URL or a list of them: %w", err)
	}
	*p = l
	return nil
}

// The dataclasses whose fields the decoder knows, by SGLang's class name.
var dataclasses = []struct {
	name string
	typ  reflect.Type
}{
	{"DiffusionTestCase", reflect.TypeFor[Case]()},
	{"DiffusionServerArgs", reflect.TypeFor[CaseServer]()},
	{"DiffusionSamplingParams", reflect.TypeFor[CaseSampling]()},
}

// knownFields are the fields of an SGLang dataclass that diffusion-check maps, in its order.
func knownFields(class string) []string {
	i := slices.IndexFunc(dataclasses, func(d struct {
		name string
		typ  reflect.Type
	}) bool {
		return d.name == class
	})
	if i < 0 {
		return nil
	}
	t := dataclasses[i].typ
	out := make([]string, 0, t.NumField())
	for f := range t.Fields() {
		out = append(out, strings.Split(f.Tag.Get("json"), ",")[0])
	}
	return out
}

// ErrUnknownField is returned (wrapped) for a registry whose dataclasses have a field the
// decoder does not know.
var ErrUnknownField = errors.New("SGLang's registry has fields diffusion-check does not map yet")

// Decode reads the exporter's JSON. Every field of SGLang's dataclasses must be one the
// decoder knows: a new field is an error naming the class and the field, so that what it
// means is decided, never dropped.
func Decode(data []byte) (*Registry, error) {
	var reg Registry
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(&reg); err != nil {
		return nil, fmt.Errorf("read the exporter's output: %w", err)
	}
	var unknown []string
	for _, c := range dataclasses {
		known := knownFields(c.name)
		for _, f := range reg.Fields[c.name] {
			if !slices.Contains(known, f) {
				unknown = append(unknown, c.name+"."+f)
			}
		}
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("%w: %s (a new field must be given a meaning before a suite is written: docs/sglang.md)",
			ErrUnknownField, strings.Join(unknown, ", "))
	}
	return &reg, nil
}
