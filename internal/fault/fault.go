package fault

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Set is the misbehaviours the reference server is told to show. Request numbers K count
// every generation request the server process receives, from 1, across cases. The zero value
// is a healthy server.
type Set struct {
	DriftAfter        int     // outputs of requests > K drift from the deterministic output
	VideoDriftAfter   int     // only the pictures of requests > K drift
	AudioDriftAfter   int     // only the audio track of requests > K drifts
	DriftAt           int     // only the output of request K drifts (a one-off leak)
	Offset            int     // every output's pixel values are this many levels higher (another GPU class)
	SlowAfter         int     // requests > K are slower ...
	SlowFactor        float64 // ... by this factor
	SlowAt            int     // only request K is slower (a one-off, as noise on a shared runner) ...
	SlowAtFactor      float64 // ... by this factor
	SlowChunk         int     // chunk K of every realtime session (1-based) is slower ...
	SlowChunkFactor   float64 // ... by this factor
	CloseChunk        int     // the server closes every realtime session before sending chunk K
	MemGrowMiB        float64 // each request's runtime peak is this much higher than the previous one's
	MemSpikeAt        int     // request K really holds MemSpikeMiB more host memory while it denoises ...
	MemSpikeMiB       float64 // ... and reports a runtime peak that much higher
	CrashAt           int     // the process dies during request K
	HangAt            int     // request K never completes
	CorruptAt         int     // request K returns truncated media
	EmptyAt           int     // request K returns empty media
	NoPerfRecord      bool    // no performance.log records are written
	FailStartup       bool    // the server exits with an error before it is ready
	NoLoadLine        bool    // the server logs no [server-load] line (SGLang before PR #39206)
	ModelsAnyID       bool    // GET /v1/models/{id} answers every id with the model card, never 404
	T2VTakesRef       bool    // a T2V model takes an input_reference instead of refusing it with 400
	ModelIDIgnored    bool    // /v1/models names the model path, not the --model-id the server was started with
	LoRASetFails      bool    // POST /v1/set_lora answers 500
	LoRAMergeFails    bool    // POST /v1/merge_lora_weights answers 500
	LoRAUnmergeFails  bool    // POST /v1/unmerge_lora_weights answers 500
	LoRAListEmpty     bool    // GET /v1/list_loras lists no adapter
	LoRASwitchSticks  bool    // set_lora of adapters already loaded leaves the applied ones as they were
	RevisedPromptEcho bool    // a thinking request's revised_prompt echoes the prompt, without the model's plan
	BatchUnmerged     bool    // with dynamic batching on, every request runs alone: none is merged
	BatchSwapped      bool    // the two requests of a merged batch get each other's output
	BatchSplitFails   bool    // a merged batch fails: its requests answer 500, "Dynamic batching failed"
	ChatEmpty         bool    // a chat completion's content is empty
	ChatUsageOff      bool    // a chat completion's total_tokens is one more than its prompt and completion tokens
	LogFloodMiB       float64 // the server logs this much (1 KiB lines) while it loads
	LogLineMiB        float64 // the server logs one line this long while it loads

	specs []string
}

// Set adds one fault spec such as "crash-at=2" or "slow-after=1:3". It makes *Set a
// flag.Value, so --fault can be repeated.
func (f *Set) Set(spec string) error {
	name, arg, hasArg := strings.Cut(strings.TrimSpace(spec), "=")
	i := slices.IndexFunc(kinds, func(k kind) bool { return k.name == name })
	if i < 0 {
		return fmt.Errorf("unknown fault %q (known: %s)", spec, strings.Join(Known(), ", "))
	}
	k := kinds[i]
	v, ok := k.form.parse(arg, hasArg)
	if !ok {
		if k.form == flagOnly {
			return fmt.Errorf("fault %q: %s takes no value", spec, name)
		}
		return fmt.Errorf("fault %q: want %s%s with %s", spec, name, k.form.value(), k.form.rule())
	}
	k.set(f, v)
	f.specs = append(f.specs, strings.TrimSpace(spec))
	return nil
}

// Known lists the fault specs Set accepts, in the form `serve --fault` help and the
// unknown-fault error show them (and the fault table of docs/reference-server.md, which a test
// of cmd/diffusion-check compares with both).
func Known() []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = k.name + k.form.value()
	}
	return out
}

// kinds is every fault, in the order help and docs list them: a new fault is a field of Set
// and one row here, and its row in docs/reference-server.md.
var kinds = []kind{
	{"drift-after", request, func(f *Set, v value) { f.DriftAfter = v.k }},
	{"video-drift-after", request, func(f *Set, v value) { f.VideoDriftAfter = v.k }},
	{"audio-drift-after", request, func(f *Set, v value) { f.AudioDriftAfter = v.k }},
	{"drift-at", request, func(f *Set, v value) { f.DriftAt = v.k }},
	{"offset", levels, func(f *Set, v value) { f.Offset = v.k }},
	{"slow-after", requestFactor, func(f *Set, v value) { f.SlowAfter, f.SlowFactor = v.k, v.x }},
	{"slow-at", requestFactor, func(f *Set, v value) { f.SlowAt, f.SlowAtFactor = v.k, v.x }},
	{"slow-chunk", requestFactor, func(f *Set, v value) { f.SlowChunk, f.SlowChunkFactor = v.k, v.x }},
	{"close-chunk", request, func(f *Set, v value) { f.CloseChunk = v.k }},
	{"mem-grow", mebibytes, func(f *Set, v value) { f.MemGrowMiB = v.x }},
	{"mem-spike-at", requestMiB, func(f *Set, v value) { f.MemSpikeAt, f.MemSpikeMiB = v.k, v.x }},
	{"crash-at", request, func(f *Set, v value) { f.CrashAt = v.k }},
	{"hang-at", request, func(f *Set, v value) { f.HangAt = v.k }},
	{"corrupt-at", request, func(f *Set, v value) { f.CorruptAt = v.k }},
	{"empty-at", request, func(f *Set, v value) { f.EmptyAt = v.k }},
	{"no-perf-record", flagOnly, func(f *Set, _ value) { f.NoPerfRecord = true }},
	{"fail-startup", flagOnly, func(f *Set, _ value) { f.FailStartup = true }},
	{"no-load-line", flagOnly, func(f *Set, _ value) { f.NoLoadLine = true }},
	{"models-any-id", flagOnly, func(f *Set, _ value) { f.ModelsAnyID = true }},
	{"t2v-takes-reference", flagOnly, func(f *Set, _ value) { f.T2VTakesRef = true }},
	{"model-id-ignored", flagOnly, func(f *Set, _ value) { f.ModelIDIgnored = true }},
	{"lora-set-fails", flagOnly, func(f *Set, _ value) { f.LoRASetFails = true }},
	{"lora-merge-fails", flagOnly, func(f *Set, _ value) { f.LoRAMergeFails = true }},
	{"lora-unmerge-fails", flagOnly, func(f *Set, _ value) { f.LoRAUnmergeFails = true }},
	{"lora-list-empty", flagOnly, func(f *Set, _ value) { f.LoRAListEmpty = true }},
	{"lora-switch-sticks", flagOnly, func(f *Set, _ value) { f.LoRASwitchSticks = true }},
	{"revised-prompt-echo", flagOnly, func(f *Set, _ value) { f.RevisedPromptEcho = true }},
	{"batch-unmerged", flagOnly, func(f *Set, _ value) { f.BatchUnmerged = true }},
	{"batch-swapped", flagOnly, func(f *Set, _ value) { f.BatchSwapped = true }},
	{"batch-split-fails", flagOnly, func(f *Set, _ value) { f.BatchSplitFails = true }},
	{"chat-empty", flagOnly, func(f *Set, _ value) { f.ChatEmpty = true }},
	{"chat-usage-off", flagOnly, func(f *Set, _ value) { f.ChatUsageOff = true }},
	{"log-flood", mebibytes, func(f *Set, v value) { f.LogFloodMiB = v.x }},
	{"log-line", mebibytes, func(f *Set, v value) { f.LogLineMiB = v.x }},
}

// kind is one fault: its name, the value its spec takes, and the fields of Set it sets.
type kind struct {
	name string
	form form
	set  func(*Set, value)
}

// value is what a spec's value holds: a request number K, and a factor or MiB.
type value struct {
	k int
	x float64
}

// form is the shape of a spec's value.
type form int

const (
	flagOnly      form = iota // no value: "no-perf-record"
	request                   // "=K": a request number K ≥ 1
	requestFactor             // "=K:FACTOR": K ≥ 1 and a factor > 0
	mebibytes                 // "=MiB": MiB > 0
	levels                    // "=LEVELS": a whole number of 8-bit levels, 1 to 255
	requestMiB                // "=K:MiB": K ≥ 1 and 0 < MiB ≤ MaxSpikeMiB (really allocated)
)

// MaxSpikeMiB bounds mem-spike-at: the reference server really allocates it.
const MaxSpikeMiB = 4096

// value is the form as help writes it after the fault's name.
func (f form) value() string {
	return [...]string{flagOnly: "", request: "=K", requestFactor: "=K:FACTOR", mebibytes: "=MiB", levels: "=LEVELS", requestMiB: "=K:MiB"}[f]
}

// rule says what a valid value is, for the error of an invalid one.
func (f form) rule() string {
	return [...]string{flagOnly: "no value", request: "a request number K ≥ 1", requestFactor: "K ≥ 1 and FACTOR > 0", mebibytes: "MiB > 0",
		levels: "1 ≤ LEVELS ≤ 255", requestMiB: "K ≥ 1 and 0 < MiB ≤ 4096"}[f]
}

// parse reads a spec's value (arg, present or not) in this form.
func (f form) parse(arg string, hasArg bool) (value, bool) {
	switch f {
	case flagOnly:
		return value{}, !hasArg
	case request:
		k, err := strconv.Atoi(arg)
		return value{k: k}, hasArg && err == nil && k >= 1
	case requestFactor, requestMiB:
		ks, xs, ok := strings.Cut(arg, ":")
		k, err1 := strconv.Atoi(ks)
		x, err2 := strconv.ParseFloat(xs, 64)
		return value{k: k, x: x}, hasArg && ok && err1 == nil && err2 == nil && k >= 1 && x > 0 && (f == requestFactor || x <= MaxSpikeMiB)
	case levels:
		k, err := strconv.Atoi(arg)
		return value{k: k}, hasArg && err == nil && k >= 1 && k <= 255
	default: // mebibytes
		x, err := strconv.ParseFloat(arg, 64)
		return value{x: x}, hasArg && err == nil && x > 0
	}
}

// String lists the specs that were set, comma-separated.
func (f *Set) String() string {
	if f == nil {
		return ""
	}
	return strings.Join(f.specs, ",")
}

// Specs returns the specs that were set, in order, e.g. to pass them on as --fault flags.
func (f *Set) Specs() []string { return append([]string(nil), f.specs...) }
