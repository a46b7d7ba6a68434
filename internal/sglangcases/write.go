package sglangcases

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/diffusion-check/diffusion-check/baselines"
	"github.com/diffusion-check/diffusion-check/internal/words"
	"gopkg.in/yaml.v3"
)

// WriteOptions say where the suite goes and what it names.
type WriteOptions struct {
	// SuiteDir is the folder the suite file will be in: every path of SGLang's checkout is
	// written relative to it, as a suite's paths are read.
	SuiteDir string
	// Root is SGLang's checkout (Export's), and Commit its commit ("" when unknown).
	Root, Commit string
	// GPU is the suite's gpu: class ("" leaves it to the run).
	GPU string
}

// Summary counts what Write did.
type Summary struct {
	Cases, Servers int
	// Commented counts the cases written commented out, by reason kind.
	Commented map[string]int
}

// The kinds of case a suite cannot drive yet (Summary.Commented), each written out commented
// with its reason.
const (
	kindMesh     = "3d (mesh) case"
	kindAction   = "action case"
	kindNoPrompt = "no prompt (SGLang skips it)"
	kindURLEdit  = "image edit by URL (direct_url_test)"
	kindRealtime = "realtime events or output format"
	kindEPSize   = "ep_size"
	kindBadValue = "value the suite cannot hold"
)

// entry is one case as written: its node, or why it is commented out.
type entry struct {
	id, list string
	node     *yaml.Node
	notes    []string
	kind     string // non-empty: commented out
	why      string
}

// server is one launch that cases share.
type server struct {
	name    string
	command []string
	env     map[string]string
	model   string
}

func (s *server) key() string {
	var b strings.Builder
	b.WriteString(strings.Join(s.command, "\x00"))
	for _, k := range slices.Sorted(maps.Keys(s.env)) {
		fmt.Fprintf(&b, "\x01%s=%s", k, s.env[k])
	}
	return b.String()
}

// writer holds what Write builds.
type writer struct {
	o       WriteOptions
	rootRel string // Root relative to SuiteDir, with "/" separators
	servers []*server
	byKey   map[string]*server
	// estimates are the baseline file's estimated_full_test_time_s by case (estimatesFrom).
	estimates     map[string]float64
	estimatesFrom string
}

// Write turns a registry into a suite file: one case per case of SGLang's lists, in their order
// (a case in two lists once, under the first; the same id with other fields in two lists is an
// error), servers shared by cases whose launch is the same, SGLang's baseline, threshold and
// ground-truth files referred to in place. A case the suite cannot drive yet is written
// commented out with its reason, never dropped.
func Write(reg *Registry, o WriteOptions) ([]byte, Summary, error) {
	root, err := filepath.Abs(o.Root)
	if err != nil {
		return nil, Summary{}, err
	}
	o.Root = root
	rel, err := filepath.Rel(o.SuiteDir, root)
	if err != nil {
		return nil, Summary{}, fmt.Errorf("SGLang's checkout %s relative to the suite's folder %s: %w", root, o.SuiteDir, err)
	}
	w := &writer{o: o, rootRel: filepath.ToSlash(rel), byKey: map[string]*server{}}
	if err := w.loadEstimates(reg); err != nil {
		return nil, Summary{}, err
	}
	var entries []entry
	first := map[string]struct {
		list string
		c    Case
	}{}
	for _, l := range reg.Lists {
		for _, c := range l.Cases {
			if f, ok := first[c.ID]; ok {
				if !sameCase(f.c, c) {
					return nil, Summary{}, fmt.Errorf("case %s is in %s and in %s with other fields: a suite has one case per id; choose the lists with --lists",
						c.ID, f.list, l.Name)
				}
				continue
			}
			first[c.ID] = struct {
				list string
				c    Case
			}{l.Name, c}
			entries = append(entries, w.entry(c, l.Name))
		}
	}
	sum := Summary{Commented: map[string]int{}}
	var b bytes.Buffer
	var enc encoder
	w.header(&b, reg)
	b.WriteString(enc.encode(w.top(reg)))
	if len(w.servers) > 0 {
		servers := mapping()
		for _, s := range w.servers {
			addPair(servers, s.name, s.node())
		}
		b.WriteString(enc.encode(mapping("servers", servers)))
	}
	b.WriteString("cases:\n")
	for _, e := range entries {
		for _, n := range e.notes {
			fmt.Fprintf(&b, "  # %s\n", n)
		}
		if e.kind != "" {
			sum.Commented[e.kind]++
			fmt.Fprintf(&b, "  # not driven by diffusion-check yet: %s\n", e.why)
			b.WriteString(indentLines(enc.encode(sequence(e.node)), "  # ", "  #"))
			continue
		}
		sum.Cases++
		b.WriteString(indentLines(enc.encode(sequence(e.node)), "  ", ""))
	}
	if enc.err != nil {
		return nil, Summary{}, enc.err
	}
	sum.Servers = len(w.servers)
	return b.Bytes(), sum, nil
}

// loadEstimates reads the estimated_full_test_time_s of every scenario from the perf baseline
// file of the suite's platform (h100 when the suite names no GPU class: SGLang's platform for
// every GPU that is not XPU, sm120 or Blackwell), with SGLang's vendor files merged, as the
// partitioning of SGLang's CI reads them. The plan job has no GPU, so the estimates travel in
// the suite. A missing file gives none.
func (w *writer) loadEstimates(reg *Registry) error {
	p, err := baselines.ChoosePlatform(baselines.PlatformInput{Kind: baselines.PlatformPerf, Class: w.o.GPU, Explicit: w.o.GPU != ""})
	if err != nil {
		return err
	}
	name := p.Name
	if name == "" {
		name = "h100"
	}
	path := filepath.Join(filepath.Dir(reg.GPUCases), "perf_baselines", name+".json")
	f, err := baselines.Load(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err == nil {
		f, err = f.MergeVendors()
	}
	if err != nil {
		return err
	}
	w.estimates, w.estimatesFrom = map[string]float64{}, path
	for id, s := range f.Scenarios {
		if s.EstimatedFullTestTimeS != nil && *s.EstimatedFullTestTimeS > 0 {
			w.estimates[id] = *s.EstimatedFullTestTimeS
		}
	}
	return nil
}

// sameCase reports whether two cases of one id are the same case.
func sameCase(a, b Case) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

func (w *writer) header(b *bytes.Buffer, reg *Registry) {
	commit := w.o.Commit
	if commit == "" {
		commit = "an unknown commit (not a git checkout)"
	}
	fmt.Fprintf(b, "# SGLang's diffusion test cases, written by `diffusion-check sglang-suite` from SGLang's own registry\n")
	fmt.Fprintf(b, "# (%s) at %s.\n", w.relPath(reg.GPUCases), commit)
	fmt.Fprintf(b, "# Do not edit it: write it again from the registry (docs/sglang.md).\n")
	if w.estimatesFrom != "" {
		fmt.Fprintf(b, "# Estimates: estimated_full_test_time_s of %s.\n", w.relPath(w.estimatesFrom))
	}
	for _, l := range reg.Lists {
		if l.AliasOf != "" {
			fmt.Fprintf(b, "# %s: the same list as %s.\n", l.Name, l.AliasOf)
			continue
		}
		fmt.Fprintf(b, "# %s: %s, lane %s.\n", l.Name, words.Plural(len(l.Cases), "case"), laneOf(l.Name))
	}
}

// top is the suite's top level above servers and cases.
func (w *writer) top(reg *Registry) *yaml.Node {
	m := mapping("name", str("sglang"))
	if w.o.GPU != "" {
		addPair(m, "gpu", str(w.o.GPU))
	}
	serverDir := filepath.Dir(reg.GPUCases)
	for _, f := range []struct{ key, dir string }{{"baselines", "perf_baselines"}, {"thresholds", "consistency_thresholds"}} {
		if fi, err := os.Stat(filepath.Join(serverDir, f.dir)); err == nil && fi.IsDir() {
			addPair(m, f.key, str(w.relPath(filepath.Join(serverDir, f.dir))))
		}
	}
	if gt := reg.CIData; gt.Repo != "" && gitSHA.MatchString(gt.Revision) {
		store := mapping("repo", str("https://github.com/"+strings.TrimPrefix(gt.Repo, "https://github.com/")), "commit", str(gt.Revision))
		if gt.Root != "" {
			addPair(store, "path", str(gt.Root))
		}
		addPair(m, "ground_truth", store)
	}
	return m
}

var gitSHA = regexp.MustCompile(`^[0-9a-f]{40}$`)

// laneOf is a list's lane: its name in lower case without _CASES (ONE_GPU_CASES: one_gpu), so
// that each of SGLang's CI jobs is a commit status of its own.
func laneOf(list string) string {
	return strings.ToLower(strings.TrimSuffix(list, "_CASES"))
}

// relPath writes a path of SGLang's checkout relative to the suite's folder; any other path as
// it is.
func (w *writer) relPath(p string) string {
	if r, ok := strings.CutPrefix(p, w.o.Root+string(filepath.Separator)); ok {
		return pathJoin(w.rootRel, filepath.ToSlash(r))
	}
	return p
}

func pathJoin(a, b string) string {
	if a == "." || a == "" {
		return b
	}
	return a + "/" + b
}

// inTree rewrites the absolute paths of SGLang's checkout inside a command-line token
// ("--cache-dit-config=/ci/sglang/python/…") relative to the suite's folder, the server's
// working directory.
func (w *writer) inTree(tok string) string {
	return strings.ReplaceAll(tok, w.o.Root+string(filepath.Separator), pathJoin(w.rootRel, ""))
}

// command is the server's command line as SGLang's harness builds it: the fixture
// diffusion_server (test_server_common.py) joins "--model-type diffusion", the parallelism,
// offload and LoRA flags, "--strict-ports" and the case's extras into one string, and
// ServerManager.start (test_server_utils.py) splits it on white space after `sglang serve
// --model-path M --port P --log-level=debug` and adds `--uvicorn-access-log-exclude-prefixes
// /health` unless it is there (pandalee99/sglang @ cce0a1244, 2026-08-23).
func (w *writer) command(s CaseServer) []string {
	extra := []string{"--model-type diffusion", fmt.Sprintf("--num-gpus %d", s.NumGPUs)}
	if s.TPSize != nil {
		extra = append(extra, fmt.Sprintf("--tp-size %d", *s.TPSize))
	}
	if s.UlyssesDegree != nil {
		extra = append(extra, fmt.Sprintf("--ulysses-degree %d", *s.UlyssesDegree))
	}
	if s.DitLayerwise {
		extra = append(extra, "--dit-layerwise-offload true")
	}
	if p := string(s.DitOffloadPrefetch); p != "" && p != "null" && p != "0" && p != "0.0" {
		extra = append(extra, "--dit-offload-prefetch-size "+p)
	}
	if s.TextEncoderCPUOffload {
		extra = append(extra, "--text-encoder-cpu-offload")
	}
	if s.RingDegree != nil {
		extra = append(extra, fmt.Sprintf("--ring-degree %d", *s.RingDegree))
	}
	if s.CFGParallel != nil && *s.CFGParallel {
		extra = append(extra, "--enable-cfg-parallel")
	}
	if s.LoraPath != nil && *s.LoraPath != "" {
		extra = append(extra, "--lora-path "+*s.LoraPath)
	}
	extra = append(extra, "--strict-ports")
	extra = append(extra, s.Extras...)
	argv := []string{"sglang", "serve", "--model-path", s.ModelPath, "--port", "{port}", "--log-level=debug"}
	for _, tok := range strings.Fields(strings.Join(extra, " ")) {
		argv = append(argv, w.inTree(tok))
	}
	const exclude = "--uvicorn-access-log-exclude-prefixes"
	if !slices.ContainsFunc(argv, func(a string) bool { return strings.HasPrefix(a, exclude) }) {
		argv = append(argv, exclude, "/health")
	}
	return argv
}

// serverOf is the shared server of a case's launch: its command, and the environment the
// fixture adds (SGLANG_CACHE_DIT_ENABLED for enable_cache_dit, then env_vars).
func (w *writer) serverOf(c Case) *server {
	s := &server{command: w.command(c.ServerArgs), env: map[string]string{}, model: c.ServerArgs.ModelPath}
	if c.ServerArgs.EnableCacheDit {
		s.env["SGLANG_CACHE_DIT_ENABLED"] = "true"
	}
	for k, v := range c.ServerArgs.EnvVars {
		s.env[k] = w.inTree(v)
	}
	if have := w.byKey[s.key()]; have != nil {
		return have
	}
	s.name = c.ID
	w.servers = append(w.servers, s)
	w.byKey[s.key()] = s
	return s
}

func (s *server) node() *yaml.Node {
	cmd := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, a := range s.command {
		cmd.Content = append(cmd.Content, str(a))
	}
	m := mapping("command", cmd)
	if len(s.env) > 0 {
		env := mapping()
		for _, k := range slices.Sorted(maps.Keys(s.env)) {
			addPair(env, k, str(s.env[k]))
		}
		addPair(m, "env", env)
	}
	addPair(m, "model", str(s.model))
	return m
}

// call is which of SGLang's request functions serves a case (test_server_utils.py
// get_generate_fn): by modality, then realtime, image and prompt, and direct_url_test.
func call(c Case) string {
	p := c.SamplingParams
	prompt := p.Prompt != nil && *p.Prompt != ""
	image := len(p.ImagePath) > 0
	switch c.ServerArgs.Modality {
	case "3d":
		return "mesh"
	case "action":
		return "action"
	case "video":
		switch {
		case p.RealtimeNumChunks != nil:
			return "realtime"
		case image && prompt && p.DirectURL:
			return "ti2v_url"
		case image && prompt:
			return "ti2v"
		case image:
			return "i2v"
		}
		return "t2v"
	}
	switch {
	case prompt && image && p.DirectURL:
		return "edit_url"
	case prompt && image:
		return "edit"
	}
	return "t2i"
}

var sizePattern = regexp.MustCompile(`^[1-9][0-9]*x[1-9][0-9]*$`)

// entry maps one case; a case the suite cannot drive is returned with its kind and reason.
func (w *writer) entry(c Case, list string) entry {
	e := entry{id: c.ID, list: list}
	p := c.SamplingParams
	fn := call(c)
	skip := func(kind, why string) entry {
		e.kind, e.why = kind, why
		s := &server{name: c.ID, command: w.command(c.ServerArgs), model: c.ServerArgs.ModelPath}
		e.node = w.caseNode(c, list, fn, s)
		e.notes = append(e.notes, fmt.Sprintf("%s would run on: %s", c.ID, strings.Join(s.command, " ")))
		return e
	}
	prompt := p.Prompt != nil && *p.Prompt != ""
	switch {
	case fn == "mesh":
		return skip(kindMesh, "modality 3d: SGLang checks a mesh (/v1/meshes, MeshValidator); diffusion-check checks images and videos")
	case fn == "action":
		return skip(kindAction, "modality action: SGLang checks an action array (/v1/actions/generations); diffusion-check checks images and videos")
	case !prompt && fn != "i2v":
		return skip(kindNoPrompt, "it has no prompt, and SGLang's harness skips such a case (pytest.skip)")
	case fn == "edit_url":
		return skip(kindURLEdit, "SGLang sends the input images as URLs in an edit request's url field; diffusion-check sends input images as files")
	case fn == "realtime" && (len(p.RealtimeEvents) > 0 || p.RealtimeOutputFormat != nil):
		return skip(kindRealtime, "a realtime case with realtime_events or realtime_output_format, which diffusion-check's realtime client does not send")
	case c.ServerArgs.EPSize != nil:
		return skip(kindEPSize, fmt.Sprintf("ep_size=%d: the newest readable harness (test_server_common.py, 2026-08-23) does not show how SGLang passes it",
			*c.ServerArgs.EPSize))
	case c.ServerArgs.CustomValidator != nil && *c.ServerArgs.CustomValidator != c.ServerArgs.Modality:
		return skip(kindBadValue, fmt.Sprintf("custom_validator %q on a case of modality %s: diffusion-check picks its checks by modality",
			*c.ServerArgs.CustomValidator, c.ServerArgs.Modality))
	case p.OutputSize != "" && !sizePattern.MatchString(p.OutputSize):
		return skip(kindBadValue, fmt.Sprintf("output_size %q is not WIDTHxHEIGHT", p.OutputSize))
	case c.ServerArgs.Modality == "image" && p.OutputFormat != nil && !slices.Contains([]string{"png", "jpeg", "webp"}, *p.OutputFormat):
		return skip(kindBadValue, fmt.Sprintf("output_format %q is none of png, jpeg, webp", *p.OutputFormat))
	}
	s := w.serverOf(c)
	e.node = w.caseNode(c, list, fn, s)
	return e
}

// caseNode is the case's YAML, on server s.
func (w *writer) caseNode(c Case, list, fn string, s *server) *yaml.Node {
	p := c.SamplingParams
	m := mapping("id", str(c.ID), "server", str(s.name))
	addPair(m, "lane", str(laneOf(list)))
	modality := c.ServerArgs.Modality
	if modality == "video" && p.ExpectAudio {
		modality = "video+audio"
	}
	addPair(m, "modality", str(modality))
	if c.PerfRepeatRequests > 1 {
		addPair(m, "repeat", integer(c.PerfRepeatRequests))
	}
	if c.PerfWarmupRequests > 0 {
		addPair(m, "warmup", integer(c.PerfWarmupRequests))
	}
	if c.ServerArgs.NumGPUs > 1 {
		addPair(m, "num_gpus", integer(c.ServerArgs.NumGPUs))
	}
	if c.ExpectedModelID != nil && *c.ExpectedModelID != "" {
		addPair(m, "expected_model_id", str(*c.ExpectedModelID))
	}
	if c.RunRevisedPromptCheck {
		addPair(m, "revised_prompt", boolean(true))
	}
	if est, ok := w.estimates[c.ID]; ok {
		addPair(m, "estimate", str(strconv.FormatFloat(est, 'f', -1, 64)+"s"))
	}
	addPair(m, "request", w.request(c, fn))
	if l := loraNode(c); l != nil {
		addPair(m, "lora", l)
	}
	if len(c.DynamicBatchingRequests) > 0 {
		// Each is a whole Images API request (generate_image_response); the suite refuses a
		// list that is not two, as SGLang's smoke asserts.
		reqs := &yaml.Node{Kind: yaml.SequenceNode}
		for _, p := range c.DynamicBatchingRequests {
			reqs.Content = append(reqs.Content, w.request(Case{ID: c.ID, SamplingParams: p}, "t2i"))
		}
		addPair(m, "dynamic_batching", mapping("requests", reqs))
	}
	if fn == "realtime" && p.RealtimeNumChunks != nil {
		rt := mapping("num_chunks", integer(*p.RealtimeNumChunks))
		if p.RealtimeIgnoreInitial > 0 {
			addPair(rt, "ignore_initial_chunks", integer(p.RealtimeIgnoreInitial))
		}
		if len(p.RealtimePerfThresholds) > 0 {
			th := mapping()
			for _, k := range slices.Sorted(maps.Keys(p.RealtimePerfThresholds)) {
				addPair(th, k, number(strconv.FormatFloat(p.RealtimePerfThresholds[k], 'g', -1, 64)))
			}
			addPair(rt, "thresholds", th)
		}
		addPair(m, "realtime", rt)
	}
	checks := mapping()
	off := func(key string, on bool) {
		if !on {
			addPair(checks, key, boolean(false))
		}
	}
	off("perf", c.RunPerfCheck)
	off("memory", c.RunPerfCheck)
	off("consistency", c.RunConsistencyCheck)
	if modality == "video+audio" {
		off("audio", c.RunConsistencyCheck)
	}
	off("models_api", c.RunModelsAPICheck)
	if modality != "image" {
		off("t2v_input_reference", c.RunT2VInputReferenceCheck)
	}
	if len(checks.Content) > 0 {
		checks.Style = yaml.FlowStyle
		addPair(m, "checks", checks)
	}
	return m
}

// loraNode is the case's lora block: its dynamic and second adapters and the LoRA checks it
// runs (its startup adapter is the server's --lora-path, which the case reads); nil for a
// case with none of them.
func loraNode(c Case) *yaml.Node {
	a := c.ServerArgs
	l := mapping()
	for _, p := range []struct {
		key  string
		path *string
	}{{"dynamic_path", a.DynamicLoraPath}, {"second_path", a.SecondLoraPath}} {
		if p.path != nil && *p.path != "" {
			addPair(l, p.key, str(*p.path))
		}
	}
	for _, f := range []struct {
		key string
		on  bool
	}{{"basic_api", c.RunLoraBasicAPICheck}, {"dynamic_load", c.RunLoraDynamicLoadCheck}, {"dynamic_switch", c.RunLoraDynamicSwitchCheck},
		{"multi_lora", c.RunMultiLoraAPICheck}} {
		if f.on {
			addPair(l, f.key, boolean(true))
		}
	}
	if len(l.Content) == 0 {
		return nil
	}
	l.Style = yaml.FlowStyle
	return l
}

// request is the request SGLang's harness sends for the case (get_generate_fn's functions):
// which of the video fields it sends depends on the function, and extras go into the body.
func (w *writer) request(c Case, fn string) *yaml.Node {
	p := c.SamplingParams
	r := mapping()
	if p.Prompt != nil && *p.Prompt != "" {
		addPair(r, "prompt", str(*p.Prompt))
	}
	if p.OutputSize != "" {
		addPair(r, "size", str(p.OutputSize))
	}
	extra := map[string]any{}
	switch fn {
	case "mesh", "action":
		// Written commented out: the request is not one diffusion-check sends.
		return r
	case "t2i", "edit", "edit_url":
		if p.OutputFormat != nil {
			addPair(r, "output_format", str(*p.OutputFormat))
		}
		if p.NumOutputs > 1 {
			addPair(r, "n", integer(p.NumOutputs))
		}
		if fn != "t2i" {
			images := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
			for _, path := range p.ImagePath {
				images.Content = append(images.Content, str(w.relPath(path)))
			}
			addPair(r, "images", images)
			if p.NumFrames != nil {
				extra["num_frames"] = *p.NumFrames
			}
		}
		maps.Copy(extra, p.Extras)
	default: // video
		seconds := p.Seconds
		if seconds == 0 {
			seconds = 4 // video_seconds = seconds or 4
		}
		addPair(r, "seconds", integer(seconds))
		if p.FPS != nil && fn != "t2v" && fn != "i2v" {
			addPair(r, "fps", integer(*p.FPS))
		}
		if p.NumFrames != nil && *p.NumFrames > 0 && fn != "i2v" {
			addPair(r, "num_frames", integer(*p.NumFrames))
		}
		switch fn {
		case "ti2v_url":
			// SGLang sends reference_url, fps and num_frames, and not the case's extras.
			if len(p.ImagePath) == 1 {
				extra["reference_url"] = p.ImagePath[0]
			} else {
				extra["reference_url"] = p.ImagePath
			}
		case "ti2v", "i2v", "realtime":
			if len(p.ImagePath) > 0 {
				addPair(r, "input_reference", str(w.relPath(p.ImagePath[0])))
			}
			maps.Copy(extra, p.Extras)
		default:
			maps.Copy(extra, p.Extras)
		}
	}
	if len(extra) > 0 {
		addPair(r, "extra", anyNode(extra))
	}
	return r
}

// YAML nodes.

func mapping(kv ...any) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode}
	for i := 0; i+1 < len(kv); i += 2 {
		addPair(m, kv[i].(string), kv[i+1].(*yaml.Node))
	}
	return m
}

func addPair(m *yaml.Node, k string, v *yaml.Node) { m.Content = append(m.Content, str(k), v) }

func sequence(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Content: items}
}

func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

func integer(n int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(n)}
}

func number(s string) *yaml.Node {
	tag := "!!int"
	if strings.ContainsAny(s, ".eE") {
		tag = "!!float"
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: s}
}

func boolean(b bool) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(b)}
}

// anyNode is a JSON value (numbers as json.Number) as YAML, mappings in key order.
func anyNode(v any) *yaml.Node {
	switch v := v.(type) {
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
	case bool:
		return boolean(v)
	case int:
		return integer(v)
	case json.Number:
		return number(v.String())
	case float64:
		return number(strconv.FormatFloat(v, 'g', -1, 64))
	case string:
		return str(v)
	case []string:
		s := sequence()
		for _, x := range v {
			s.Content = append(s.Content, str(x))
		}
		return s
	case []any:
		s := sequence()
		for _, x := range v {
			s.Content = append(s.Content, anyNode(x))
		}
		return s
	case map[string]any:
		m := mapping()
		for _, k := range slices.Sorted(maps.Keys(v)) {
			addPair(m, k, anyNode(v[k]))
		}
		return m
	}
	return str(fmt.Sprint(v))
}

// encoder writes nodes as YAML with two-space indents, keeping the first error.
type encoder struct{ err error }

func (e *encoder) encode(n *yaml.Node) string {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil && e.err == nil {
		e.err = fmt.Errorf("write the suite as YAML: %w", err)
	}
	if err := enc.Close(); err != nil && e.err == nil {
		e.err = fmt.Errorf("write the suite as YAML: %w", err)
	}
	return b.String()
}

// indentLines puts prefix before every line of s (blank before an empty one).
func indentLines(s, prefix, blank string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		if strings.TrimSpace(line) == "" {
			b.WriteString(blank + "\n")
			continue
		}
		b.WriteString(prefix + line)
	}
	return b.String()
}
