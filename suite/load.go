package suite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/fault"
	"github.com/diffusion-check/diffusion-check/internal/inputfile"
	"github.com/diffusion-check/diffusion-check/internal/sglangenv"
	"github.com/diffusion-check/diffusion-check/internal/strictdecode"
	"github.com/diffusion-check/diffusion-check/results"
)

// The defaults that suite.go documents, in one place.
const (
	defaultLane         = "base"
	defaultLogMarker    = "Application startup complete." // SGLang's (uvicorn's) startup line
	defaultHealth       = "/health"
	defaultStartTimeout = 20 * time.Minute // as SGLang's own test harness
	defaultStopGrace    = 10 * time.Second
	// defaultStartEstimate is SGLang's planning figure for a server start (docs/sglang-compat.md §7).
	defaultStartEstimate        = 120 * time.Second
	defaultBuiltinStartEstimate = time.Second
	defaultRequestTimeout       = 10 * time.Minute
	defaultPerfRecordTimeout    = 30 * time.Second
	defaultPollInterval         = 100 * time.Millisecond
	defaultBuiltinStepMs        = 2
	defaultBuiltinLoadMs        = 50
	defaultBuiltinModel         = "diffusion-check/reference"
	defaultBuiltinTiming        = "measured"
	defaultOutputFormat         = "png"
)

// perfLogEnv is set by the runner for every server it starts; a value in the suite would be
// overridden without a word, so it is refused.
const perfLogEnv = sglangenv.PerfLogDir

// maxSuiteBytes bounds a suite file; SGLang's largest case table is under 200 KiB.
const maxSuiteBytes = 8 << 20

// Load reads and validates the suite file at path. A returned error joins one
// *strictdecode.Error per problem found, each formatted as "path:line: field: message".
func Load(path string) (*Suite, error) {
	// A pull request writes the suite: read it as untrusted, a regular file of bounded size
	// (a FIFO or /dev/zero in its place is refused, not waited on). Load takes no context:
	// this is one bounded read of a local file.
	data, err := inputfile.Read(context.Background(), path, maxSuiteBytes)
	if err != nil {
		return nil, fmt.Errorf("read suite: %w", err)
	}
	return Parse(path, data)
}

// Parse decodes and validates a suite file's contents. path names the file in messages, and
// relative paths in the suite are resolved against its folder; the input files that cases
// name are looked up on disk.
func Parse(path string, data []byte) (*Suite, error) {
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		dir = filepath.Dir(path)
	}
	d := &decoder{YAML: strictdecode.YAML{Problems: strictdecode.Problems{File: path}}, dir: dir}
	s := d.suite(data)
	if err := d.Err(); err != nil {
		return nil, err
	}
	s.Path = filepath.Join(dir, filepath.Base(path))
	return s, nil
}

// path resolves a path written in the suite against the suite's folder.
func (d *decoder) path(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(d.dir, p)
}

func (d *decoder) suite(data []byte) *Suite {
	root := d.Document(data, "a suite file", "empty file; want a mapping with name, servers and cases")
	if root == nil {
		return nil
	}
	if strictdecode.Deref(root).Kind != yaml.MappingNode {
		d.Addf(root.Line, "", "want a mapping with name, servers and cases at the top level, got %s", strictdecode.Describe(root))
		return nil
	}
	o := d.object(root, "", keysOf(suiteObject)...)
	if o == nil {
		return nil
	}
	// The runner names results after the suite; the file's name is the obvious default.
	s := &Suite{Name: strings.TrimSuffix(filepath.Base(d.File), filepath.Ext(d.File)), Servers: map[string]*Server{}}
	o.str("name", &s.Name)
	o.str("gpu", &s.GPU)
	s.Noise = d.noise(o, Noise{OnUnconfirmed: OnUnconfirmedFail})
	repeat := d.repeatLimits(o, repeatInherit{limits: checks.DefaultRepeatLimits()})
	s.RepeatLimits = repeat.limits
	if o.integer("validation_threads", &s.ValidationThreads) {
		o.atLeast("validation_threads", s.ValidationThreads, 1)
	}
	for key, dst := range map[string]*string{
		"baselines": &s.Baselines, "thresholds": &s.Thresholds, "known_failures": &s.KnownFailures, "quality_thresholds": &s.QualityThresholds,
	} {
		o.str(key, dst)
		*dst = d.path(*dst)
	}
	s.GroundTruth, s.GroundTruthStore = d.groundTruth(o)
	if v, field, ok := o.get("servers"); ok {
		if es, ok := d.Entries(v, field); ok {
			for _, e := range es {
				s.Servers[e.Name] = d.server(e, s.Noise)
			}
		}
	}
	v, field, ok := o.require("cases")
	if !ok {
		return s
	}
	n := strictdecode.Deref(v)
	if n.Kind != yaml.SequenceNode {
		d.Addf(v.Line, field, "want a list of cases, got %s", strictdecode.Describe(n))
		return s
	}
	if len(n.Content) == 0 {
		d.Addf(v.Line, field, "no cases; a suite needs at least one")
	}
	type seen struct {
		id   string
		line int
	}
	ids := map[string]seen{} // by lower-case id
	for i, raw := range n.Content {
		c, idLine := d.testCase(fmt.Sprintf("cases[%d]", i), raw, s.Servers, s.Noise, repeat)
		s.Cases = append(s.Cases, c)
		if c.ID == "" {
			continue
		}
		field := fmt.Sprintf("cases[%d].id", i)
		key := strings.ToLower(c.ID)
		switch first, dup := ids[key]; {
		case !dup:
			ids[key] = seen{c.ID, idLine}
		case first.id == c.ID:
			d.Addf(idLine, field, "duplicate id %q, first at line %d", c.ID, first.line)
		default:
			// Ids become folder names, and macOS and Windows fold letter case.
			d.Addf(idLine, field, "id %q differs from %q (line %d) only in letter case; ids become folder names", c.ID, first.id, first.line)
		}
	}
	return s
}

// validName reports whether s can be a case id, server name or lane name (results.ValidName):
// they become folder names and status contexts, and are shown in PR comments.
func validName(s string) bool { return results.ValidName(s) == nil }

const namePattern = results.NamePattern

func (d *decoder) server(e strictdecode.Entry, noise Noise) *Server {
	field := "servers." + e.Name
	srv := newServer(e, noise)
	if !validName(e.Name) {
		d.Addf(e.Key.Line, field, "server name must match %s, got %q; it becomes part of folder names", namePattern, e.Name)
	}
	o := d.object(e.Val, field, keysOf(serverObject)...)
	if o == nil {
		return srv
	}
	srv.Noise = d.noise(o, noise)
	d.serverLaunch(o, field, srv)
	if o.str("dir", &srv.Dir) {
		srv.Dir = d.path(srv.Dir)
	}
	if v, f, ok := o.get("ready"); ok {
		d.ready(v, f, &srv.Ready)
	}
	o.str("model", &srv.Model)
	srv.Paths = d.paths(o)
	srv.Imports = d.imports(o)
	serverLimits(o, srv)
	var reuse *bool
	if o.boolean("reuse", &reuse) {
		srv.Reuse = *reuse
	}
	return srv
}

// newServer is server entry e with every setting at its default, noise its noise rules.
func newServer(e strictdecode.Entry, noise Noise) *Server {
	return &Server{
		Name:              e.Name,
		Line:              e.Key.Line,
		Ready:             Readiness{LogMarker: defaultLogMarker, Health: defaultHealth},
		StartTimeout:      defaultStartTimeout,
		StopGrace:         defaultStopGrace,
		RequestTimeout:    defaultRequestTimeout,
		PerfRecordTimeout: defaultPerfRecordTimeout,
		PollInterval:      defaultPollInterval,
		MaxOutputMB:       DefaultMaxOutputMB,
		Noise:             noise,
	}
}

// serverLaunch reads how server object o (at field) is started into srv: builtin, or command
// and env, exactly one of builtin and command, and a command that is given the port and, for
// `sglang serve`, flag values it accepts.
func (d *decoder) serverLaunch(o *object, field string, srv *Server) {
	// `builtin:` with no value is the healthy reference server, like `builtin: {}`.
	if o.has("builtin") {
		srv.Builtin = d.builtin(o)
	}
	if v, f, ok := o.get("command"); ok {
		if argv, ok := d.strings(v, f); ok {
			if len(argv) == 0 || argv[0] == "" {
				d.Addf(v.Line, f, "want a program and its arguments, got an empty command")
			}
			srv.Command = argv
		}
	}
	switch _, _, hasCommand := o.get("command"); {
	case srv.Builtin != nil && hasCommand:
		d.Addf(o.lineOf("command"), field, "both builtin and command; a server is one or the other")
	case srv.Builtin == nil && !hasCommand:
		d.Addf(o.line, field, "neither builtin nor command; give the command line of the server, or builtin: {} for the reference server")
	}
	if v, f, ok := o.get("env"); ok {
		srv.Env = d.env(v, f)
	}
	if srv.Builtin == nil && len(srv.Command) > 0 && !mentionsPort(srv) {
		d.Addf(o.lineOf("command"), strictdecode.Join(field, "command"),
			"no \"{port}\" in any argument or env value; diffusion-check picks the port and must pass it to the server")
	} else if srv.Builtin == nil && SGLangServe(srv.Command) {
		if problem := sglangPort(srv.Command); problem != "" {
			d.Addf(o.lineOf("command"), strictdecode.Join(field, "command"), "%s", problem)
		}
		for _, problem := range sglangFlagValues(srv.Command) {
			d.Addf(o.lineOf("command"), strictdecode.Join(field, "command"), "%s: sglang serve would stop at once (server_args.py)", problem)
		}
	}
}

// serverLimits reads server object o's timeouts, start estimate and output cap into srv,
// keeping the defaults newServer set for those it does not give.
func serverLimits(o *object, srv *Server) {
	o.duration("start_timeout", &srv.StartTimeout, 1)
	o.duration("stop_grace", &srv.StopGrace, 0)
	o.duration("request_timeout", &srv.RequestTimeout, 1)
	o.duration("perf_record_timeout", &srv.PerfRecordTimeout, 1)
	o.duration("poll_interval", &srv.PollInterval, 1)
	srv.StartEstimate = defaultStartEstimate
	if srv.Builtin != nil {
		srv.StartEstimate = defaultBuiltinStartEstimate
	}
	o.duration("start_estimate", &srv.StartEstimate, 0)
	if o.integer("max_output_mb", &srv.MaxOutputMB) {
		o.atLeast("max_output_mb", srv.MaxOutputMB, 1)
	}
}

func mentionsPort(srv *Server) bool {
	for _, a := range srv.Command {
		if strings.Contains(a, "{port}") {
			return true
		}
	}
	for _, v := range srv.Env {
		if strings.Contains(v, "{port}") {
			return true
		}
	}
	return false
}

func (d *decoder) builtin(server *object) *Builtin {
	b := &Builtin{StepMs: defaultBuiltinStepMs, LoadMs: defaultBuiltinLoadMs, Model: defaultBuiltinModel, Timing: defaultBuiltinTiming}
	v, field, ok := server.get("builtin")
	if !ok {
		return b
	}
	o := d.object(v, field, keysOf(builtinObject)...)
	if o == nil {
		return b
	}
	if v, f, ok := o.get("faults"); ok {
		if specs, ok := d.strings(v, f); ok {
			// Package fault decides what a valid fault is, so the suite and `serve --fault` agree.
			var faults fault.Set
			for i, spec := range specs {
				if err := faults.Set(spec); err != nil {
					d.Addf(strictdecode.Deref(v).Content[i].Line, fmt.Sprintf("%s[%d]", f, i), "%v", err)
				}
			}
			b.Faults = faults.Specs()
		}
	}
	if o.number("step_ms", &b.StepMs) && b.StepMs < 0 {
		d.Addf(o.lineOf("step_ms"), strictdecode.Join(field, "step_ms"), "must not be negative, got %v", b.StepMs)
	}
	if o.number("load_ms", &b.LoadMs) && b.LoadMs < 0 {
		d.Addf(o.lineOf("load_ms"), strictdecode.Join(field, "load_ms"), "must not be negative, got %v", b.LoadMs)
	}
	if o.number("http_start_ms", &b.HTTPStartMs) && b.HTTPStartMs < 0 {
		d.Addf(o.lineOf("http_start_ms"), strictdecode.Join(field, "http_start_ms"), "must not be negative, got %v", b.HTTPStartMs)
	}
	if o.number("warmup_ms", &b.WarmupMs) && b.WarmupMs < 0 {
		d.Addf(o.lineOf("warmup_ms"), strictdecode.Join(field, "warmup_ms"), "must not be negative, got %v", b.WarmupMs)
	}
	o.str("model", &b.Model)
	o.str("model_id", &b.ModelID)
	o.str("lora_path", &b.LoraPath)
	if o.str("task_type", &b.TaskType) && !slices.Contains(builtinTaskTypes(), b.TaskType) {
		d.Addf(o.lineOf("task_type"), strictdecode.Join(field, "task_type"), "want one of %s, got %q", strings.Join(builtinTaskTypes(), ", "), b.TaskType)
	}
	if o.integer("batching_max_size", &b.BatchingMaxSize) {
		o.atLeast("batching_max_size", b.BatchingMaxSize, 1)
	}
	if o.number("batching_delay_ms", &b.BatchingDelayMs) && b.BatchingDelayMs < 0 {
		d.Addf(o.lineOf("batching_delay_ms"), strictdecode.Join(field, "batching_delay_ms"), "must not be negative, got %v", b.BatchingDelayMs)
	}
	o.duration("perf_lag", &b.Lag, 0)
	if o.str("timing", &b.Timing) && !slices.Contains(BuiltinTimings(), b.Timing) {
		d.Addf(o.lineOf("timing"), strictdecode.Join(field, "timing"), "want %s, got %q", strings.Join(BuiltinTimings(), " or "), b.Timing)
	}
	return b
}

func (d *decoder) env(raw *yaml.Node, field string) map[string]string {
	es, ok := d.Entries(raw, field)
	if !ok {
		return nil
	}
	env := make(map[string]string, len(es))
	for _, e := range es {
		f := strictdecode.Join(field, e.Name)
		switch {
		case e.Name == "" || strings.ContainsAny(e.Name, "=\x00"):
			d.Addf(e.Key.Line, field, "invalid variable name %q", e.Name)
			continue
		case e.Name == perfLogEnv:
			d.Addf(e.Key.Line, f, "set by diffusion-check for every server it starts, to find the performance log")
			continue
		}
		// An empty value sets the variable to "", as in a shell.
		if strictdecode.IsNull(e.Val) {
			env[e.Name] = ""
		} else if v, ok := d.str(e.Val, f); ok {
			env[e.Name] = v
		}
	}
	return env
}

func (d *decoder) ready(raw *yaml.Node, field string, r *Readiness) {
	o := d.object(raw, field, keysOf(readyObject)...)
	if o == nil {
		return
	}
	o.str("log", &r.LogMarker)
	if o.str("health", &r.Health) && r.Health != "-" && !strings.HasPrefix(r.Health, "/") {
		d.Addf(o.lineOf("health"), strictdecode.Join(field, "health"), "want a path starting with \"/\", or \"-\" for none, got %q", r.Health)
	}
	if r.LogMarker == "" && r.Health == "-" {
		d.Addf(o.line, field, "no way to tell that the server is ready: log is empty and health is \"-\"")
	}
}

// testCase reads one case; idLine is where its id is written, for duplicate ids.
func (d *decoder) testCase(field string, raw *yaml.Node, servers map[string]*Server, noise Noise, repeat repeatInherit) (c *Case, idLine int) {
	c = &Case{Line: raw.Line, Lane: defaultLane, Repeat: 1, Concurrency: 1, NumGPUs: 1, Noise: noise, RepeatLimits: repeat.limits}
	o := d.object(raw, field, keysOf(caseObject)...)
	if o == nil {
		return c, 0
	}
	idLine = o.lineOf("id")
	if v, f, ok := o.require("id"); ok {
		if id, ok := d.str(v, f); ok {
			if validName(id) {
				c.ID = id
			} else {
				d.Addf(v.Line, f, "must match %s, got %q; ids become folder names", namePattern, id)
			}
		}
	}
	if v, f, ok := o.require("server"); ok {
		if name, ok := d.str(v, f); ok {
			c.Server = name
			if srv, declared := servers[name]; !declared {
				d.Addf(v.Line, f, "unknown server %q (declared: %s)", name, serverNames(servers))
			} else {
				c.Noise = srv.Noise
			}
		}
	}
	if o.str("lane", &c.Lane) && c.Lane == "" {
		c.Lane = defaultLane
	}
	if v, f, ok := o.get("lane"); ok && !validName(c.Lane) {
		d.Addf(v.Line, f, "must match %s, got %q; lane names become status contexts and PR comment headings", namePattern, c.Lane)
	}
	c.Modality = d.modality(o)
	// A wrong repeat is reported once; comparing concurrency with it would add a second,
	// misleading message.
	repeatOK := true
	if _, _, given := o.get("repeat"); given {
		repeatOK = o.integer("repeat", &c.Repeat) && o.atLeast("repeat", c.Repeat, 1)
	}
	if o.integer("concurrency", &c.Concurrency) && o.atLeast("concurrency", c.Concurrency, 1) && repeatOK && c.Concurrency > c.Repeat {
		d.Addf(o.lineOf("concurrency"), strictdecode.Join(field, "concurrency"), "must be ≤ repeat (%d), got %d", c.Repeat, c.Concurrency)
	}
	if o.integer("warmup", &c.Warmup) {
		o.atLeast("warmup", c.Warmup, 0)
	}
	o.duration("estimate", &c.Estimate, 0)
	o.duration("timeout", &c.Timeout, 0)
	c.Paths = d.paths(o)
	o.str("expected_model_id", &c.ExpectedModelID)
	var revised *bool
	if o.boolean("revised_prompt", &revised) {
		c.RevisedPrompt = *revised
		if c.RevisedPrompt && c.Modality != "" && c.Modality != Image {
			d.Addf(o.lineOf("revised_prompt"), strictdecode.Join(field, "revised_prompt"),
				"revised_prompt is checked on images (SGLang's image API answers it), got modality %s", c.Modality)
		}
	}
	if o.integer("num_gpus", &c.NumGPUs) {
		o.atLeast("num_gpus", c.NumGPUs, 1)
	}
	if v, f, ok := o.get("request"); ok {
		c.Request = d.request(v, f, c.Modality)
		if srv := servers[c.Server]; srv != nil && SGLangServe(srv.Command) && c.Modality != "" {
			if extra, _, ok := requestExtra(v); ok {
				d.sglangExtra(extra, strictdecode.Join(f, "extra"), c.Modality)
			}
		}
	} else {
		d.Addf(o.line, strictdecode.Join(field, "request"), "missing")
	}
	if v, f, ok := o.get("checks"); ok {
		d.toggles(v, f, &c.Checks)
	}
	d.caseBlocks(o, field, c, servers[c.Server])
	c.Noise = d.noise(o, c.Noise)
	c.RepeatLimits = d.repeatLimits(o, repeat).limits
	return c, idLine
}

// caseBlocks reads what makes a case other than one request repeated: a realtime session, its
// LoRA checks, its dynamic-batching smoke, and the rules of a text case.
func (d *decoder) caseBlocks(o *object, field string, c *Case, srv *Server) {
	d.caseRealtime(o, field, c)
	d.caseLoRA(o, field, c, srv)
	d.caseBatching(o, field, c, srv)
	d.caseText(o, field, c)
}

// caseRealtime reads a case's realtime block and what it forbids: requests at once, which SGLang
// serves one at a time, and warm-up requests, which SGLang's DiffusionTestCase.__post_init__
// refuses ("request warmup requires non-realtime metrics").
func (d *decoder) caseRealtime(o *object, field string, c *Case) {
	v, f, ok := o.get("realtime")
	if !ok {
		return
	}
	c.Realtime = d.realtime(v, f, c.Modality)
	if c.Realtime != nil && c.Concurrency > 1 {
		d.Addf(o.lineOf("concurrency"), strictdecode.Join(field, "concurrency"), "%s", realtimeConcurrency(c.Concurrency))
	}
	if c.Realtime != nil && c.Warmup > 0 {
		d.Addf(o.lineOf("warmup"), strictdecode.Join(field, "warmup"),
			"a realtime case takes no warm-up requests, as SGLang refuses them (\"request warmup requires non-realtime metrics\")")
	}
}

// modality reads a case's modality: one diffusion-check checks, or "" after a reported problem.
func (d *decoder) modality(o *object) Modality {
	v, f, ok := o.require("modality")
	if !ok {
		return ""
	}
	m, ok := d.str(v, f)
	if !ok {
		return ""
	}
	switch Modality(m) {
	case Image, Video, VideoAudio, Text:
		return Modality(m)
	}
	if why := unsupportedModality(m); why != "" {
		d.Addf(v.Line, f, "%s", why)
	} else {
		d.Addf(v.Line, f, "unknown modality %q (known: image, video, video+audio, text)", m)
	}
	return ""
}

// unsupportedModality says why a modality of SGLang's harness that diffusion-check does not
// check is refused ("" for a name that is no such modality). SGLang's DiffusionServerArgs
// has image, video, "3d" and "action" (testcase_configs.py @ a7ec6b97f786); a 3-D mesh case
// is judged there by Chamfer distance against a reference .glb (MeshValidator,
// validate_mesh_correctness) and an action case by comparing action JSON
// (_validate_action_consistency), neither of which diffusion-check implements, so such a case
// is refused at load instead of being passed unchecked.
func unsupportedModality(m string) string {
	switch strings.ToLower(m) {
	case "3d", "mesh":
		return fmt.Sprintf(
			"modality %q: 3-D mesh cases are not supported (SGLang checks them by Chamfer distance against a reference .glb, "+
				"which diffusion-check does not implement); leave the case out of the suite (known: image, video, video+audio, text)",
			m,
		)
	case "action":
		return fmt.Sprintf(
			"modality %q: action cases are not supported (SGLang checks their action JSON against a ground-truth .json, "+
				"which diffusion-check does not implement); leave the case out of the suite (known: image, video, video+audio, text)",
			m,
		)
	}
	return ""
}

func serverNames(servers map[string]*Server) string {
	if len(servers) == 0 {
		return "none"
	}
	names := make([]string, 0, len(servers))
	for name := range servers {
		names = append(names, name)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// request reads a case's request. modality is empty when it was missing or wrong, and then
// the fields that depend on it are not checked against it.
func (d *decoder) request(raw *yaml.Node, field string, modality Modality) Request {
	var r Request
	o := d.object(raw, field, keysOf(requestObject)...)
	if o == nil {
		return r
	}
	o.str("prompt", &r.Prompt)
	o.str("negative_prompt", &r.NegativePrompt)
	if v, f, ok := o.get("size"); ok {
		if size, ok := d.str(v, f); ok {
			r.Size = size
			var valid bool
			if r.Width, r.Height, valid = parseSize(size); !valid {
				d.Addf(v.Line, f, "want WIDTHxHEIGHT with positive integers, such as \"1280x720\", got %q", size)
			}
		}
	}
	if v, f, ok := o.get("seed"); ok {
		if seed, ok := d.integer(v, f); ok {
			s := int64(seed)
			r.Seed = &s
		}
	}
	if o.integer("steps", &r.Steps) {
		o.atLeast("steps", r.Steps, 0)
	}
	if v, f, ok := o.get("guidance_scale"); ok {
		if g, ok := d.number(v, f); ok {
			r.GuidanceScale = &g
		}
	}
	image := modality == Image
	video := modality == Video || modality == VideoAudio
	wrongModality := func(key, want string) {
		d.Addf(o.vals[key].Key.Line, strictdecode.Join(field, key), "applies to %s cases only; this case's modality is %s", want, modality)
	}

	d.imageFields(o, field, &r, image, video, wrongModality)

	// Video fields.
	var seconds float64
	if o.number("seconds", &seconds) {
		if seconds < 0 {
			d.Addf(o.lineOf("seconds"), strictdecode.Join(field, "seconds"), "must not be negative, got %v", seconds)
		} else if s, ok := d.wholeSeconds(o.lineOf("seconds"), strictdecode.Join(field, "seconds"), seconds); ok {
			r.Seconds = s
		}
	}
	if o.integer("fps", &r.FPS) {
		o.atLeast("fps", r.FPS, 0)
	}
	if o.integer("num_frames", &r.NumFrames) {
		o.atLeast("num_frames", r.NumFrames, 0)
	}
	if o.str("input_reference", &r.InputReference) && r.InputReference != "" && !IsURL(r.InputReference) {
		r.InputReference = d.path(r.InputReference)
		d.inputFile(o.lineOf("input_reference"), strictdecode.Join(field, "input_reference"), r.InputReference)
	}
	if image {
		for _, key := range []string{"seconds", "fps", "num_frames", "input_reference"} {
			if _, _, ok := o.get(key); ok {
				wrongModality(key, "video")
			}
		}
	}

	if v, f, ok := o.get("extra"); ok {
		if strictdecode.Deref(v).Kind != yaml.MappingNode {
			d.Addf(v.Line, f, "want a mapping of extra request fields, got %s", strictdecode.Describe(v))
		} else if extra, ok := d.value(v, f); ok {
			r.Extra = extra.(map[string]any)
		}
	}
	return r
}

// imageFields reads a request's image-only fields into r: output_format (defaulted for image
// cases), n and the input images of an edit. wrongModality reports one given to a video case.
func (d *decoder) imageFields(o *object, field string, r *Request, image, video bool, wrongModality func(key, want string)) {
	if o.str("output_format", &r.OutputFormat) {
		switch r.OutputFormat {
		case "png", "jpeg", "webp":
		default:
			d.Addf(o.lineOf("output_format"), strictdecode.Join(field, "output_format"), "unknown output format %q (known: png, jpeg, webp)", r.OutputFormat)
		}
		if video {
			wrongModality("output_format", "image")
		}
	} else if image {
		r.OutputFormat = defaultOutputFormat
	}
	r.N = 1
	if o.integer("n", &r.N) {
		o.atLeast("n", r.N, 1)
		if video {
			wrongModality("n", "image")
		}
	}
	if v, f, ok := o.get("images"); ok {
		if images, ok := d.strings(v, f); ok && len(images) > 0 {
			for i, p := range images {
				if IsURL(p) {
					continue // fetched when the case runs, as SGLang's download_image_from_url
				}
				images[i] = d.path(p)
				d.inputFile(strictdecode.Deref(v).Content[i].Line, fmt.Sprintf("%s[%d]", f, i), images[i])
			}
			r.Images = images
		}
		if video {
			wrongModality("images", "image (edit)")
		}
	}
}

// parseSize parses "WxH" strictly: the size also names ground-truth files, so "0640x480" or
// " 640x480" must not silently mean 640x480.
func parseSize(s string) (w, h int, ok bool) {
	ws, hs, found := strings.Cut(s, "x")
	if !found {
		return 0, 0, false
	}
	dim := func(s string) (int, bool) {
		if s == "" || s[0] < '1' || s[0] > '9' || strings.Trim(s, "0123456789") != "" {
			return 0, false
		}
		v, err := strconv.Atoi(s)
		return v, err == nil
	}
	w, okW := dim(ws)
	h, okH := dim(hs)
	if !okW || !okH {
		return 0, 0, false
	}
	return w, h, true
}

// inputFile reports an input that cannot be sent: the run would otherwise fail at the first
// request, on a GPU runner, after the server has loaded.
func (d *decoder) inputFile(line int, field, path string) {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		d.Addf(line, field, "no such file: %s", path)
	case fi.IsDir():
		d.Addf(line, field, "is a folder, want a file: %s", path)
	}
}

func (d *decoder) toggles(raw *yaml.Node, field string, t *Toggles) {
	o := d.object(raw, field, keysOf(checksObject)...)
	if o == nil {
		return
	}
	o.boolean("ground_truth_required", &t.GroundTruthRequired)
	o.boolean("perf", &t.Perf)
	o.boolean("memory", &t.Memory)
	o.boolean("consistency", &t.Consistency)
	o.boolean("audio", &t.Audio)
	o.boolean("perf_record", &t.PerfRecord)
	o.boolean("output", &t.Output)
	o.boolean("repeat", &t.Repeat)
	o.boolean("models_api", &t.ModelsAPI)
	o.boolean("t2v_input_reference", &t.T2VInputReference)
}
