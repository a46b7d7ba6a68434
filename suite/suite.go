package suite

import (
	"path/filepath"
	"strings"
	"time"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/gitstore"
)

// Modality is what a case's requests produce.
type Modality string

// The modalities a case can have.
const (
	Image      Modality = "image"
	Video      Modality = "video"
	VideoAudio Modality = "video+audio"
	// Text is a text-generating model's case: each request is SGLang's chat-completion smoke
	// (suite/text.go).
	Text Modality = "text"
)

// Suite is a validated suite file. Paths are absolute, resolved against the suite file's folder.
type Suite struct {
	// Path is the suite file it was read from.
	Path string
	// Name is the suite's `name:`; Load sets the file's base name when it has none.
	Name string
	// GPU is the GPU class whose baselines and thresholds apply (h100, h200, 5090, b200, ...);
	// empty means "detect".
	GPU        string
	Servers    map[string]*Server
	Cases      []*Case
	Baselines  string // perf_baselines/<gpu>.json or a folder of them
	Thresholds string // consistency_thresholds/<gpu>.json or a folder of them
	// QualityThresholds is SGLang's quality_thresholds.json: floors of the no-reference
	// quality metrics per case (baselines.QualityThresholds); empty: none.
	QualityThresholds string
	GroundTruth       string // folder of ground-truth media
	KnownFailures     string // known-failures YAML
	// GroundTruthStore is `ground_truth: {repo, commit, path}`: the ground truth is that folder
	// of a git repository at a pinned commit, fetched by the runner (GroundTruth is then
	// empty). A local repository's path is absolute here.
	GroundTruthStore *gitstore.Store
	// Noise is the top level's confirm and on_unconfirmed, which servers and cases inherit.
	Noise Noise
	// RepeatLimits is the top level's repeat_thresholds over the built-in defaults, which
	// cases inherit key by key.
	RepeatLimits checks.RepeatLimits
	// ValidationThreads bounds the threads that validate a request's output (its metric, and
	// each of its ffmpeg decoders) while the next request runs; 0 means the runner's default,
	// half the cores.
	ValidationThreads int
}

// DisplayName is the suite's name, or its file's base name without extension for a suite
// made without Load and given no name: what results and plans call it.
func (s *Suite) DisplayName() string {
	if s.Name != "" {
		return s.Name
	}
	return strings.TrimSuffix(filepath.Base(s.Path), filepath.Ext(s.Path))
}

// Server says how to start one server under test and when it is ready.
type Server struct {
	Name string
	// Command is the argv template; "{port}" in any element is replaced by a free port.
	// Empty when Builtin is set.
	Command []string
	// Builtin, when set, starts the reference server (`diffusion-check serve`) with these options
	// through the same lifecycle code as any other command.
	Builtin *Builtin
	Env     map[string]string
	// Dir is the working directory of the server process; empty means the suite's folder.
	Dir   string
	Ready Readiness
	// Model is sent as the "model" field of every request when set.
	Model        string
	StartTimeout time.Duration // default 20m, as SGLang's harness
	StopGrace    time.Duration // SIGTERM → SIGKILL, default 10s
	// RequestTimeout bounds one request from send to complete output; default 10m.
	RequestTimeout time.Duration
	// PerfRecordTimeout bounds the wait for the request's performance.log record; default 30s.
	PerfRecordTimeout time.Duration
	// PollInterval is how often a video job is polled; default 100ms.
	PollInterval time.Duration
	// StartEstimate is the expected time from launch to ready, for planning partitions: every
	// server start costs it once. Default 120s (SGLang's planning figure); 1s for builtin servers.
	StartEstimate time.Duration
	// Reuse keeps one warm server for all of its cases in a partition.
	Reuse bool
	// Paths are globs over repository paths (test-impact selection, selection): a
	// change matching one selects every case of this server. A case's own Paths come after
	// these, so its "!negations" can take some back.
	Paths []string
	// Imports, when set, decide for a changed .py file below their root whether it can
	// affect this server's cases: when the server imports it. Paths then decide only for
	// the other changed paths.
	Imports *Imports
	// MaxOutputMB caps one response body (an image response, a video file), which is streamed
	// to disk: a server that answers without end cannot fill the memory or the disk.
	// Default DefaultMaxOutputMB.
	MaxOutputMB int
	// Noise is the server's confirm and on_unconfirmed (the suite's where it sets none),
	// which its cases inherit.
	Noise Noise
	Line  int
}

// DefaultMaxOutputMB is the response size cap of a server that sets none: far above any
// image or video a diffusion test makes (a 97-frame 720p MP4 is a few MiB).
const DefaultMaxOutputMB = 1024

// Builtin configures the reference server.
type Builtin struct {
	Faults []string // e.g. "crash-at=2", "slow-after=1:3"
	StepMs float64  // time of one denoise step; default 2
	LoadMs float64  // simulated model load time; default 50
	// TaskType is the task type the reference server reports (`serve --task-type`); empty:
	// T2I, every input taken.
	TaskType string
	// HTTPStartMs is the time from all workers ready (the launcher's line) to the HTTP
	// server's start (`serve --http-start-ms`).
	HTTPStartMs float64
	// WarmupMs is the server warm-up after the port is live (/health answers 503
	// meanwhile); 0: one warm-up step (`serve --warmup-ms`).
	WarmupMs float64
	Model    string // model it loads (`serve --model`); default "diffusion-check/reference"
	// LoraPath is the LoRA adapter it starts with, as SGLang's --lora-path (`serve
	// --lora-path`): loaded as "default" and merged; empty: none.
	LoraPath string
	// ModelID is the id it names instead of Model, as SGLang's --model-id (`serve
	// --model-id`); empty: Model.
	ModelID string
	// BatchingMaxSize and BatchingDelayMs are SGLang's --batching-max-size (requests merged
	// into one batch; 0 or 1 merges none) and --batching-delay-ms (the wait for a
	// fuller batch; `serve --batching-max-size`, `--batching-delay-ms`).
	BatchingMaxSize int
	BatchingDelayMs float64
	Lag             time.Duration // delay before the perf record is written
	// Timing is where the perf record's durations come from: "measured" (the default) or
	// "computed" (the planned durations, the same under any load; `serve --timing`).
	Timing string
}

// BuiltinTimings are the values of a builtin server's timing, the default first: those of
// `serve --timing` (refserver.Timings, which a test of cmd compares with this list).
func BuiltinTimings() []string { return []string{"measured", "computed"} }

// builtinTaskTypes lists the task types a builtin server may report: SGLang's ModelTaskType
// names (configs/pipeline_configs/base.py, pandalee99/sglang @ cce0a1244).
func builtinTaskTypes() []string {
	return []string{"T2I", "I2I", "TI2I", "T2V", "I2V", "TI2V", "I2M", "VLA_ACTION"}
}

// Readiness says how to tell that a server has started. Both may be set: either one suffices.
type Readiness struct {
	// LogMarker is a substring of a server log line; default "Application startup complete."
	LogMarker string
	// Health is an HTTP path answering 200 when ready; default "/health". "-" disables it.
	Health string
}

// Case is one scenario: one request sent Repeat times to the same warm server.
type Case struct {
	ID       string
	Server   string
	Lane     string // default "base"
	Modality Modality
	Request  Request
	Repeat   int // default 1
	// Warmup is how many unmeasured requests are sent before the measured ones, on the same
	// server start (SGLang's perf_warmup_requests); refused for a realtime case.
	Warmup int
	// Concurrency sends up to this many of the case's requests at once; default 1 (in order).
	Concurrency int
	Checks      Toggles
	// Paths are globs over repository paths, added after its server's (see Server.Paths). A
	// case with none, of its own or its server's, is selected by every change.
	Paths []string
	// Estimate is the expected wall time of the case, for planning; 0 means unknown.
	Estimate time.Duration
	// Timeout overrides the server's RequestTimeout for this case.
	Timeout time.Duration
	// NumGPUs names the ground-truth file ({id}_{n}gpu...); default 1.
	NumGPUs int
	// RevisedPrompt checks each image's revised_prompt as SGLang's run_revised_prompt_check
	// (checks.RevisedPrompt); image cases only.
	RevisedPrompt bool
	// ExpectedModelID is the model id /v1/models must name (SGLang's expected_model_id);
	// empty: the one the server's command says (runner's expectedModel).
	ExpectedModelID string
	// Realtime, when set, makes each request one websocket session of the realtime video
	// API instead of a POST (realtime.go).
	Realtime *Realtime
	// LoRA is the case's LoRA adapters and checks (suite/lora.go); nil: none.
	LoRA *LoRA
	// Batching is the case's dynamic-batching smoke (suite/batching.go); nil: none.
	Batching *DynamicBatching
	// Noise is the confirm and on_unconfirmed in force for the case: its own, else its
	// server's, else the suite's.
	Noise Noise
	// RepeatLimits is the limits of the case's consistency.repeat checks: its
	// repeat_thresholds, else the suite's, else the built-in defaults, key by key.
	RepeatLimits checks.RepeatLimits
	Line         int
}

// Request holds the request fields of a case. Width and Height come from Size ("WxH").
type Request struct {
	Prompt         string
	NegativePrompt string
	Size           string
	Width, Height  int
	Seed           *int64
	Steps          int      // num_inference_steps; 0 = server default
	GuidanceScale  *float64 // guidance_scale
	OutputFormat   string   // png, jpeg, webp (images)
	N              int      // images per request; default 1
	// Video fields.
	Seconds   int // whole seconds: SGLang's field is an int
	FPS       int
	NumFrames int
	// InputReference is an image file for image-to-video, resolved against the suite folder.
	InputReference string
	// Images are input files for /v1/images/edits, resolved against the suite folder.
	Images []string
	// Extra is merged into the request body, as OpenAI's extra_body.
	Extra map[string]any
}

// Toggles enables or disables groups of checks for a case; nil means "default" (enabled).
type Toggles struct {
	Perf        *bool
	Memory      *bool
	Consistency *bool
	Audio       *bool
	PerfRecord  *bool // require a performance.log record per request
	Output      *bool // require decodable output of the declared shape
	// GroundTruthRequired: a case with consistency on and no ground truth fails, as SGLang's
	// "GT not found for <case>" (test_server_common.py); false is the per-case opt-out that
	// skips the comparison instead.
	GroundTruthRequired *bool
	// Repeat compares every request k ≥ 2 with request 1 (consistency.repeat).
	Repeat *bool
	// ModelsAPI and T2VInputReference are SGLang's run_models_api_check and
	// run_t2v_input_reference_check (testcase_configs.py, both True by default).
	ModelsAPI, T2VInputReference *bool
}

// Enabled reports whether a toggle is on; an unset toggle is on.
func Enabled(t *bool) bool { return t == nil || *t }

// CasesFor returns the cases of a lane in file order; an empty lane means every case.
func (s *Suite) CasesFor(lane string) []*Case {
	var out []*Case
	for _, c := range s.Cases {
		if lane == "" || c.Lane == lane {
			out = append(out, c)
		}
	}
	return out
}
