package suite

import (
	"fmt"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/gitstore"
	"github.com/diffusion-check/diffusion-check/internal/pyimport"
	"github.com/diffusion-check/diffusion-check/internal/schema"
)

// valueKind is the YAML value a suite key takes, as the decoder reads it.
type valueKind int

const (
	scalarValue    valueKind = iota // any scalar, read as written (`gpu: 5090` is "5090")
	intValue                        // a YAML integer
	numberValue                     // an integer or a float, finite
	boolValue                       // true or false
	durationValue                   // a Go duration string: "90s", "10m"
	listValue                       // a list of scalars
	envValue                        // a mapping of variable names to scalars
	anyMapping                      // a mapping of anything (a request's extra fields)
	objectValue                     // a mapping whose keys are those of another table entry
	namedObjects                    // a mapping of names to objects (servers)
	objectList                      // a list of objects (cases)
	numberMap                       // a mapping of names (those of enum, when set) to finite numbers
	scalarOrObject                  // a scalar read as written, or a mapping whose keys are those of another table entry
)

// key is one key of a suite mapping: what the decoder accepts and what the suite's JSON
// Schema (docs/schemas/suite.schema.json) says, from one definition.
type key struct {
	name     string
	kind     valueKind
	doc      string
	required bool     // absent or null is "missing"
	object   string   // the table entry of objectValue, namedObjects, objectList and scalarOrObject values
	enum     []string // allowed values of a scalar
	pattern  string   // a scalar's form, as an RE2 and ECMA-262 regular expression
	least    *float64 // the smallest number, or the shortest duration (0: not negative)
	positive bool     // a duration that must be > 0
	most     *float64 // the largest number
	minItems int
}

// The objects of a suite file, each a table entry of keyTable.
const (
	suiteObject   = "suite"
	serverObject  = "server"
	builtinObject = "builtin"
	readyObject   = "ready"
	caseObject    = "case"
	requestObject = "request"
	checksObject  = "checks"
	importsObject = "imports"
	dynamicObject = "dynamic"
	// repeatObject (repeat.go) is the consistency.repeat thresholds.
	// realtimeObject is a realtime (streaming) case's session: suite/realtime.go.
	realtimeObject = "realtime"
	// groundTruthObject is `ground_truth:` as a pinned git store: suite/groundtruth.go.
	groundTruthObject = "ground_truth"
	// loraObject is a case's LoRA adapters and checks: suite/lora.go.
	loraObject = "lora"
	// batchingObject is a case's dynamic-batching smoke: suite/batching.go.
	batchingObject = "dynamic_batching"
)

// durationPattern is the form time.ParseDuration reads, without a sign: every suite
// duration is at least 0.
const durationPattern = `^\+?((([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+|0)$`

// zeroDurationPattern matches the durations that are exactly 0, refused where a duration
// must be > 0.
const zeroDurationPattern = `^\+?(((0+(\.0*)?|\.0+)(ns|us|µs|μs|ms|s|m|h))+|0)$`

// sizePattern is parseSize's WIDTHxHEIGHT: positive integers without leading zeros.
const sizePattern = `^[1-9][0-9]*x[1-9][0-9]*$`

// keyTable lists every key of every mapping of a suite file. The decoder allows exactly these
// keys (keysOf), and the JSON Schema is made from it (JSONSchema); the values' finer rules
// (a server the case names exists, input files exist, concurrency ≤ repeat) are the
// decoder's alone.
func keyTable() map[string][]key {
	zero, one := schema.Ptr(0.0), schema.Ptr(1.0)
	noise := []key{
		{
			name:  "confirm",
			kind:  intValue,
			least: zero,
			most:  schema.Ptr(float64(maxConfirm)),
			doc:   "confirmation requests after a perf or memory failure (docs/noise.md); inherited by servers and cases",
		},
		{
			name: "on_unconfirmed",
			kind: scalarValue,
			enum: []string{OnUnconfirmedFail, OnUnconfirmedFlaky},
			doc:  "the verdict of a failure its confirmation requests do not reproduce",
		},
		{
			name:  "retry",
			kind:  intValue,
			least: zero,
			most:  schema.Ptr(float64(MaxRetry)),
			doc:   "SGLang's retry of a case that failed only perf, memory or infrastructure checks (PR #39206); inherited by servers and cases",
		},
	}
	paths := key{name: "paths", kind: listValue, doc: "globs over repository paths (test-impact selection, docs/selection.md); \"!glob\" takes paths back out"}
	return map[string][]key{
		suiteObject: append([]key{
			{name: "name", kind: scalarValue, doc: "the suite's name in results and reports; default: the file's name"},
			{name: "gpu", kind: scalarValue, doc: "GPU class whose baseline and threshold files apply (h100, h200, 5090, b200, ...); default: detected"},
			{name: "baselines", kind: scalarValue, doc: "perf baseline file (SGLang's perf_baselines/<gpu>.json) or a folder of them, relative to the suite"},
			{
				name: "thresholds",
				kind: scalarValue,
				doc:  "consistency threshold file or folder (SGLang's consistency_thresholds), relative to the suite; default: built-in thresholds",
			},
			{
				name:   "ground_truth",
				kind:   scalarOrObject,
				object: groundTruthObject,
				doc:    "folder of ground-truth media, relative to the suite (written by run --mode gt), or a git repository pinned at a commit: {repo, commit, path}",
			},
			{name: "known_failures", kind: scalarValue, doc: "known-failures YAML file (docs/known-failures.md), relative to the suite"},
			{
				name: "quality_thresholds",
				kind: scalarValue,
				doc: "floors of the no-reference quality metrics per case (SGLang's quality_thresholds.json: min_clip_score, min_clip_iqa, " +
					"min_image_reward), relative to the suite; scored by run --quality-scorer",
			},
			{
				name:   repeatObject,
				kind:   objectValue,
				object: repeatObject,
				doc:    "limits of the consistency.repeat checks (request k against request 1) for every case; docs/consistency.md",
			},
			{
				name:  "validation_threads",
				kind:  intValue,
				least: one,
				doc: "threads that validate an output (the metric, and each ffmpeg decoder) beside the next request; default half the cores; " +
					"run --validation-threads overrides it",
			},
			{name: "servers", kind: namedObjects, object: serverObject, doc: "the servers to start, by name"},
			{
				name:     "cases",
				kind:     objectList,
				object:   caseObject,
				required: true,
				minItems: 1,
				doc:      "the cases: each sends one request repeat times to one warm server",
			},
		}, noise...),
		serverObject: append([]key{
			{
				name:   "builtin",
				kind:   objectValue,
				object: builtinObject,
				doc:    "start the reference server (diffusion-check serve) instead of a command; `builtin: {}` is a healthy one",
			},
			{name: "command", kind: listValue, minItems: 1, doc: "the server's argv; \"{port}\" in an argument or env value is replaced by a free port"},
			{name: "env", kind: envValue, doc: "environment variables of the server process"},
			{name: "dir", kind: scalarValue, doc: "working folder of the server process, relative to the suite; default: the suite's folder"},
			{name: "ready", kind: objectValue, object: readyObject, doc: "how to tell that the server has started"},
			{name: "model", kind: scalarValue, doc: "sent as the \"model\" field of every request"},
			{name: "start_timeout", kind: durationValue, positive: true, doc: "launch to ready; default 20m, as SGLang's harness"},
			{name: "stop_grace", kind: durationValue, doc: "SIGTERM to SIGKILL; default 10s"},
			{name: "request_timeout", kind: durationValue, positive: true, doc: "one request, send to complete output; default 10m"},
			{name: "perf_record_timeout", kind: durationValue, positive: true, doc: "wait for a request's performance.log record; default 30s"},
			{name: "poll_interval", kind: durationValue, positive: true, doc: "how often a video job is polled; default 100ms"},
			{name: "start_estimate", kind: durationValue, doc: "expected launch to ready, for planning; default 120s (1s for builtin)"},
			{name: "reuse", kind: boolValue, doc: "keep one warm server for all of its cases in a partition"},
			{name: "max_output_mb", kind: intValue, least: one, doc: fmt.Sprintf("cap on one response body, in MB; default %d", DefaultMaxOutputMB)},
			{
				name:   "imports",
				kind:   objectValue,
				object: importsObject,
				doc:    "the server's Python entry points: a changed .py file below root selects its cases when the server imports it (docs/selection.md)",
			},
		}, append(noise, paths)...),
		importsObject: {
			{name: "root", kind: scalarValue, doc: "the folder that holds the top-level packages, from the repository root; default ."},
			{name: "modules", kind: listValue, required: true, minItems: 1, doc: "the entry modules: what the server command runs, and what it loads by name"},
			{name: "lazy", kind: scalarValue, enum: lazyModes, doc: "which lazy imports are followed: own (the entries' package; default), all or none"},
			{name: "dynamic", kind: objectList, object: dynamicObject, doc: "rules for imports by a computed name, beyond the built-in ones"},
		},
		dynamicObject: {
			{name: "module", kind: scalarValue, required: true, doc: "the module that holds the call"},
			{name: "function", kind: scalarValue, doc: "the enclosing function, as Class.method; empty for module level"},
			{
				name:     "loads",
				kind:     scalarValue,
				required: true,
				enum:     pyimport.KindNames(),
				doc:      "what the call loads: package, named, qualified, outside or ignored",
			},
			{name: "package", kind: scalarValue, doc: "for loads: package or named, the package whose modules are loaded"},
			{name: "recursive", kind: boolValue, doc: "for loads: package, every module below the package"},
		},
		builtinObject: {
			{name: "faults", kind: listValue, doc: "faults of the reference server (crash-at=2, slow-after=1:3, ...; docs/reference-server.md)"},
			{name: "step_ms", kind: numberValue, least: zero, doc: "time of one denoise step; default 2"},
			{name: "load_ms", kind: numberValue, least: zero, doc: "simulated model load time; default 50"},
			{
				name:  "http_start_ms",
				kind:  numberValue,
				least: zero,
				doc:   "time from all workers ready (SGLang's launcher line) to the HTTP server's start; default 0",
			},
			{
				name:  "warmup_ms",
				kind:  numberValue,
				least: zero,
				doc:   "server warm-up after the port is live, while /health answers 503; default one warm-up step",
			},
			{name: "model", kind: scalarValue, doc: "model it loads and, without model_id, names; default diffusion-check/reference"},
			{name: "lora_path", kind: scalarValue, doc: "the LoRA adapter it starts with, loaded as \"default\" and merged, as SGLang's --lora-path"},
			{name: "model_id", kind: scalarValue, doc: "the id /v1/models names instead of model, as SGLang's --model-id"},
			{
				name: "task_type",
				kind: scalarValue,
				enum: builtinTaskTypes(),
				doc:  "task type /v1/models reports (SGLang's ModelTaskType name); T2V and T2I refuse an input_reference; default T2I, every input taken",
			},
			{
				name:  "batching_max_size",
				kind:  intValue,
				least: one,
				doc:   "requests it merges into one batch, as SGLang's --batching-max-size; default 1 (no batching)",
			},
			{
				name:  "batching_delay_ms",
				kind:  numberValue,
				least: zero,
				doc:   "how long it waits for a fuller batch before it runs a smaller one, as SGLang's --batching-delay-ms; default 0",
			},
			{name: "perf_lag", kind: durationValue, doc: "delay before the performance.log record is written"},
			{
				name: "timing",
				kind: scalarValue,
				enum: BuiltinTimings(),
				doc:  "where the perf record's durations come from: measured (default) or computed (the same under any load)",
			},
		},
		readyObject: {
			{name: "log", kind: scalarValue, doc: "a substring of a server log line that says it is ready; default \"Application startup complete.\""},
			{name: "health", kind: scalarValue, pattern: `^(/.*|-)$`, doc: "an HTTP path answering 200 when ready, or \"-\" for none; default /health"},
		},
		caseObject: append([]key{
			{
				name:     "id",
				kind:     scalarValue,
				required: true,
				pattern:  "^" + namePattern + "$",
				doc:      "the case's id: a scenario of the baseline file, and part of folder names",
			},
			{name: "server", kind: scalarValue, required: true, doc: "the name of a server under servers"},
			{name: "lane", kind: scalarValue, doc: "the lane the case belongs to; default base"},
			{
				name:     "modality",
				kind:     scalarValue,
				required: true,
				enum:     []string{string(Image), string(Video), string(VideoAudio), string(Text)},
				doc:      "what the requests produce; text: SGLang's chat-completion smoke of a text-generating model",
			},
			{name: "repeat", kind: intValue, least: one, doc: "how many times the request is sent; default 1"},
			{
				name:  "warmup",
				kind:  intValue,
				least: zero,
				doc:   "unmeasured warm-up requests sent before the measured ones (SGLang's perf_warmup_requests); default 0",
			},
			{name: "concurrency", kind: intValue, least: one, doc: "requests in flight at once, at most repeat; default 1"},
			{name: "estimate", kind: durationValue, doc: "expected wall time of the case, for planning"},
			{name: "timeout", kind: durationValue, doc: "overrides the server's request_timeout"},
			{name: "num_gpus", kind: intValue, least: one, doc: "names the ground-truth file ({id}_{n}gpu...); default 1"},
			{
				name: "revised_prompt",
				kind: boolValue,
				doc: "image cases of a thinking model (BAGEL): each image's revised_prompt must be the prompt, a newline and a plan " +
					"(SGLang's run_revised_prompt_check, check output.revised_prompt); default false",
			},
			{
				name: "expected_model_id",
				kind: scalarValue,
				doc: "the model id /v1/models must name (SGLang's expected_model_id, check api.model_id); default the server's --served-model-name, " +
					"else its --model-id, else its --model-path",
			},
			{name: "request", kind: objectValue, object: requestObject, required: true, doc: "the request sent"},
			{name: "checks", kind: objectValue, object: checksObject, doc: "turn groups of checks off (all are on by default)"},
			{
				name:   repeatObject,
				kind:   objectValue,
				object: repeatObject,
				doc:    "limits of the consistency.repeat checks for this case, key by key over the suite's",
			},
			{
				name:   loraObject,
				kind:   objectValue,
				object: loraObject,
				doc: "the case's LoRA adapters and which of SGLang's LoRA checks run (all off by default; docs/suite.md): " +
					"basic_api, dynamic_switch and multi_lora after every request, dynamic_load once before them",
			},
			{
				name:   batchingObject,
				kind:   objectValue,
				object: batchingObject,
				doc: "SGLang's dynamic-batching smoke, after the case's requests (check batching.dynamic; docs/suite.md): two requests " +
					"sent alone, then at once, on a server started with --batching-max-size 2",
			},
			{
				name:   "realtime",
				kind:   objectValue,
				object: realtimeObject,
				doc: "a realtime (streaming) video case: one websocket session of num_chunks chunks on /v1/realtime_video/generate instead of a POST " +
					"(SGLang's realtime_num_chunks; docs/suite.md)",
			},
		}, append(noise, paths)...),
		batchingObject: {
			{name: "requests", kind: objectList, object: requestObject, required: true, minItems: 2, doc: "the two image requests, each with a prompt and a size"},
			{name: "timeout", kind: durationValue, positive: true, doc: "bounds each of its requests; default 120s (SGLang's)"},
			{
				name:     "log_timeout",
				kind:     durationValue,
				positive: true,
				doc:      "how long to wait, after the batched answers, for the scheduler's log lines; default 10s (SGLang's)",
			},
		},
		realtimeObject: {
			{
				name:     "num_chunks",
				kind:     intValue,
				required: true,
				least:    one,
				most:     schema.Ptr(float64(maxRealtimeChunks)),
				doc:      "chunks to receive before the session is closed (SGLang's realtime_num_chunks)",
			},
			{
				name:  "ignore_initial_chunks",
				kind:  intValue,
				least: zero,
				doc:   "first chunks left out of the perf metrics, fewer than num_chunks (SGLang's realtime_perf_ignore_initial_chunks); default 0",
			},
			{
				name: "thresholds",
				kind: numberMap,
				enum: checks.RealtimeMetrics(),
				doc:  "metric → limit; a metric above its limit fails (SGLang's realtime_perf_thresholds, e.g. p95_chunk_total_ms: 5000)",
			},
		},
		loraObject: {
			{name: "path", kind: scalarValue, doc: "the adapter the server starts with (SGLang's lora_path); default the server's --lora-path"},
			{name: "dynamic_path", kind: scalarValue, doc: "the adapter set_lora loads after the start, before the requests (SGLang's dynamic_lora_path)"},
			{name: "second_path", kind: scalarValue, doc: "the second adapter of dynamic_switch and multi_lora (SGLang's second_lora_path)"},
			{
				name: "basic_api",
				kind: boolValue,
				doc:  "unmerge, merge, set_lora and list_loras, each followed by a generation, after every request (run_lora_basic_api_check)",
			},
			{name: "dynamic_load", kind: boolValue, doc: "set_lora of dynamic_path once, before the requests (run_lora_dynamic_load_check)"},
			{
				name: "dynamic_switch",
				kind: boolValue,
				doc:  "switch to second_path and back, generating after each, after every request (run_lora_dynamic_switch_check)",
			},
			{
				name: "multi_lora",
				kind: boolValue,
				doc:  "both adapters at once at several strengths and targets, then path alone, after every request (run_multi_lora_api_check)",
			},
		},
		requestObject: {
			{name: "prompt", kind: scalarValue, doc: "the prompt"},
			{name: "negative_prompt", kind: scalarValue, doc: "the negative prompt"},
			{name: "size", kind: scalarValue, pattern: sizePattern, doc: "WIDTHxHEIGHT, such as 1280x720; none: the model's default size, not checked"},
			{name: "seed", kind: intValue, doc: "the seed"},
			{name: "steps", kind: intValue, least: zero, doc: "num_inference_steps; 0 is the server's default"},
			{name: "guidance_scale", kind: numberValue, doc: "guidance_scale"},
			{name: "output_format", kind: scalarValue, enum: []string{"png", "jpeg", "webp"}, doc: "image cases: the output format; default png"},
			{name: "n", kind: intValue, least: one, doc: "image cases: images per request; default 1"},
			{name: "seconds", kind: intValue, least: zero, doc: "video cases: length in whole seconds (SGLang's Optional[int])"},
			{name: "fps", kind: intValue, least: zero, doc: "video cases: frames per second"},
			{name: "num_frames", kind: intValue, least: zero, doc: "video cases: number of frames"},
			{name: "input_reference", kind: scalarValue, doc: "video cases: an image file for image-to-video, relative to the suite"},
			{name: "images", kind: listValue, doc: "image cases: input files for /v1/images/edits, relative to the suite"},
			{name: "extra", kind: anyMapping, doc: "merged into the request body, as OpenAI's extra_body"},
		},
		checksObject: {
			{name: "perf", kind: boolValue, doc: "perf checks against the baseline file"},
			{name: "memory", kind: boolValue, doc: "GPU and host memory checks"},
			{name: "consistency", kind: boolValue, doc: "comparison with the ground truth"},
			{name: "audio", kind: boolValue, doc: "audio checks of video+audio cases"},
			{name: "perf_record", kind: boolValue, doc: "require a performance.log record per request"},
			{name: "output", kind: boolValue, doc: "require decodable output of the declared shape"},
			{name: "ground_truth_required", kind: boolValue, doc: "a missing ground truth fails the case (SGLang's GT not found); false makes it a skip"},
			{name: "repeat", kind: boolValue, doc: "compare every later request with request 1 (consistency.repeat)"},
			{name: "models_api", kind: boolValue, doc: "check /v1/models and /v1/models/{id} as SGLang does (its run_models_api_check)"},
			{
				name: "t2v_input_reference",
				kind: boolValue,
				doc:  "check that a T2V model refuses an input_reference with 400 (SGLang's run_t2v_input_reference_check)",
			},
		},
		repeatObject: repeatTableKeys(),
		groundTruthObject: {
			{
				name:     "repo",
				kind:     scalarValue,
				required: true,
				doc:      "the store's git repository: an https:// URL; or a file:// URL or a local path (relative to the suite), for a repository on this machine",
			},
			{
				name:     "commit",
				kind:     scalarValue,
				required: true,
				pattern:  gitstore.CommitPattern,
				doc:      "the full 40-hex commit SHA the store is pinned at, in lower case; a branch, tag or short SHA is refused",
			},
			{
				name:    "path",
				kind:    scalarValue,
				pattern: gitstore.PathPattern,
				doc:     "the store's folder in the repository, such as diffusion-ci/consistency_gt; default: the repository's root",
			},
		},
	}
}

// keysOf is the names of an object's keys, in table order: what the decoder allows.
func keysOf(object string) []string {
	var names []string
	for _, k := range keyTable()[object] {
		names = append(names, k.name)
	}
	return names
}

// SchemaID is the $id of the suite's JSON Schema, the file a suite names for editor
// completion: `# yaml-language-server: $schema=<this>`.
const SchemaID = "https://raw.githubusercontent.com/diffusion-check/diffusion-check/main/docs/schemas/suite.schema.json"

// JSONSchema is the JSON Schema of a suite file, made from keyTable: every key with its
// type, default and allowed values, and no key beyond them. A suite it rejects, the decoder
// rejects too; the decoder also checks what a schema cannot see (files, cross-references).
func JSONSchema() *schema.Schema {
	t := keyTable()
	root := objectSchema(t, suiteObject)
	root.Schema, root.ID, root.Title = schema.Draft, SchemaID, "diffusion-check suite"
	root.Description = "A diffusion-check suite file (docs/suite.md): the servers to start and the cases to send them."
	root.Defs = map[string]*schema.Schema{}
	for name := range t {
		if name != suiteObject {
			root.Defs[name] = objectSchema(t, name)
		}
	}
	return root
}

// objectSchema is the schema of one mapping of the table.
func objectSchema(t map[string][]key, object string) *schema.Schema {
	s := &schema.Schema{Type: "object", Properties: map[string]*schema.Schema{}, AdditionalProperties: false}
	for _, k := range t[object] {
		p := valueSchema(k)
		p.Description = k.doc
		if k.required {
			s.Required = append(s.Required, k.name)
		} else {
			// `key:` with no value (null) is the default, as if the key were absent.
			p = schema.Nullable(p)
		}
		s.Properties[k.name] = p
	}
	if object == serverObject {
		// One of builtin and command; `builtin:` alone (null) is the healthy reference server.
		s.AnyOf = []*schema.Schema{{Required: []string{"builtin"}}, {Required: []string{"command"}}}
		s.Not = &schema.Schema{Required: []string{"builtin", "command"}, Properties: map[string]*schema.Schema{"command": {Type: "array"}}}
	}
	return s
}

// scalarTypes are the JSON types of a YAML scalar read as written.
func scalarTypes() []string { return []string{"string", "number", "boolean"} }

// valueSchema is the schema of one key's value.
func valueSchema(k key) *schema.Schema {
	ref := func() *schema.Schema { return &schema.Schema{Ref: "#/$defs/" + k.object} }
	switch k.kind {
	case scalarValue:
		s := &schema.Schema{Type: scalarTypes(), Pattern: k.pattern}
		if len(k.enum) > 0 {
			s.Type = "string"
			for _, v := range k.enum {
				s.Enum = append(s.Enum, v)
			}
		}
		return s
	case intValue:
		return &schema.Schema{Type: "integer", Minimum: k.least, Maximum: k.most}
	case numberValue:
		return &schema.Schema{Type: "number", Minimum: k.least, Maximum: k.most}
	case boolValue:
		return &schema.Schema{Type: "boolean"}
	case durationValue:
		s := &schema.Schema{Type: "string", Pattern: durationPattern}
		if k.positive {
			// A string: `not` of a bare pattern would refuse null, which every pattern passes.
			s.Not = &schema.Schema{Type: "string", Pattern: zeroDurationPattern}
		}
		return s
	case listValue:
		s := &schema.Schema{Type: "array", Items: &schema.Schema{Type: scalarTypes()}}
		if k.minItems > 0 {
			s.MinItems = schema.Ptr(k.minItems)
		}
		return s
	case envValue:
		return &schema.Schema{
			Type:                 "object",
			AdditionalProperties: &schema.Schema{Type: append(scalarTypes(), "null")},
			PropertyNames:        &schema.Schema{Pattern: "^[^=\u0000]+$", Not: &schema.Schema{Const: perfLogEnv}},
		}
	case anyMapping:
		return &schema.Schema{Type: "object"}
	case numberMap:
		s := &schema.Schema{Type: "object", AdditionalProperties: &schema.Schema{Type: "number"}}
		if len(k.enum) > 0 {
			s.PropertyNames = &schema.Schema{Type: "string"}
			for _, v := range k.enum {
				s.PropertyNames.Enum = append(s.PropertyNames.Enum, v)
			}
		}
		return s
	case objectValue:
		return ref()
	case scalarOrObject:
		return &schema.Schema{AnyOf: []*schema.Schema{{Type: scalarTypes()}, ref()}}
	case namedObjects:
		return &schema.Schema{Type: "object", AdditionalProperties: ref(), PropertyNames: &schema.Schema{Pattern: "^" + namePattern + "$"}}
	case objectList:
		s := &schema.Schema{Type: "array", Items: ref()}
		if k.minItems > 0 {
			s.MinItems = schema.Ptr(k.minItems)
		}
		return s
	}
	// Unreachable for the kinds above; TestSuiteSchemaCoversEveryKey fails for a new kind
	// that is not handled here.
	return &schema.Schema{}
}
