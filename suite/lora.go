package suite

import (
	"strings"

	"github.com/diffusion-check/diffusion-check/internal/strictdecode"
	"gopkg.in/yaml.v3"
)

// LoRA is a case's LoRA adapters and which of SGLang's LoRA checks it runs, all off by
// default as SGLang's case flags (testcase_configs.py DiffusionTestCase, DiffusionServerArgs:
// lora_path, dynamic_lora_path, second_lora_path; run_lora_basic_api_check,
// run_lora_dynamic_load_check, run_lora_dynamic_switch_check, run_multi_lora_api_check).
type LoRA struct {
	// Path is the adapter the server starts with (SGLang's lora_path: its --lora-path, which
	// is where it is read from when the case does not say); DynamicPath the one loaded with
	// set_lora after the start, before the case's requests; SecondPath the second adapter of
	// the switch and multi-LoRA checks.
	Path, DynamicPath, SecondPath string
	// BasicAPI: unmerge, merge, set_lora and list_loras, each followed by a generation
	// (lora.basic_api); DynamicLoad: set_lora of DynamicPath once, before the requests
	// (lora.dynamic_load); DynamicSwitch: to the second adapter and back (lora.dynamic_switch);
	// Multi: both adapters at once at several strengths and targets, then the first alone
	// (lora.multi_lora). BasicAPI, DynamicSwitch and Multi run after every request of the
	// case, as SGLang's harness runs them on every repeated request.
	BasicAPI, DynamicLoad, DynamicSwitch, Multi bool
}

// PerRequest reports whether a LoRA check runs after each of the case's requests.
func (l *LoRA) PerRequest() bool { return l != nil && (l.BasicAPI || l.DynamicSwitch || l.Multi) }

// ChangesAdapters reports whether the case's LoRA checks change the server's adapters: the
// server is then not kept for a later case, which would run on other adapters than it
// started with.
func (l *LoRA) ChangesAdapters() bool { return l.PerRequest() || l != nil && l.DynamicLoad }

// FlagValue is the value of a flag in a server's command, as "--flag value" or
// "--flag=value"; "" when absent.
func FlagValue(argv []string, flag string) string {
	for i, a := range argv {
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v
		}
		if a == flag && i+1 < len(argv) {
			return argv[i+1]
		}
	}
	return ""
}

// startupLoRA is the adapter server srv starts with: its builtin lora_path, or the value of
// --lora-path in its command; "" for none (or an unknown server).
func startupLoRA(srv *Server) string {
	switch {
	case srv == nil:
		return ""
	case srv.Builtin != nil:
		return srv.Builtin.LoraPath
	}
	return FlagValue(srv.Command, "--lora-path")
}

// caseLoRA reads a case's lora block and refuses what SGLang's DiffusionTestCase.__post_init__
// refuses (a check without the adapters it needs), a path that disagrees with the server's
// --lora-path, and requests at once beside checks that change the server's adapters between
// them.
func (d *decoder) caseLoRA(o *object, field string, c *Case, srv *Server) {
	v, f, ok := o.get("lora")
	if !ok {
		return
	}
	l, lo := d.lora(v, f)
	if l == nil {
		return
	}
	start := startupLoRA(srv)
	switch {
	case l.Path == "":
		l.Path = start
	case start != "" && start != l.Path:
		d.Addf(lo.lineOf("path"), strictdecode.Join(f, "path"), "the server %s starts with the adapter %q (--lora-path), got %q", c.Server, start, l.Path)
	}
	need := func(on bool, key, what string) {
		if on {
			d.Addf(lo.lineOf(key), strictdecode.Join(f, key), "%s (as SGLang's DiffusionTestCase refuses it)", what)
		}
	}
	need(l.BasicAPI && l.Path == "" && l.DynamicPath == "", "basic_api", "basic_api requires path (or the server's --lora-path) or dynamic_path")
	need(l.DynamicLoad && l.DynamicPath == "", "dynamic_load", "dynamic_load requires dynamic_path")
	need(l.DynamicSwitch && l.SecondPath == "", "dynamic_switch", "dynamic_switch requires second_path")
	need(l.Multi && (l.Path == "" || l.SecondPath == ""), "multi_lora", "multi_lora requires path (or the server's --lora-path) and second_path")
	if l.PerRequest() && c.Concurrency > 1 {
		d.Addf(o.lineOf("concurrency"), strictdecode.Join(field, "concurrency"),
			"must be 1 with lora checks after each request: they change the server's adapters while it generates, got %d", c.Concurrency)
	}
	c.LoRA = l
}

// lora reads a lora mapping, and returns it with its keys (nil after a reported problem).
func (d *decoder) lora(raw *yaml.Node, field string) (*LoRA, *object) {
	o := d.object(raw, field, keysOf(loraObject)...)
	if o == nil {
		return nil, nil
	}
	l := &LoRA{}
	o.str("path", &l.Path)
	o.str("dynamic_path", &l.DynamicPath)
	o.str("second_path", &l.SecondPath)
	for key, dst := range map[string]*bool{"basic_api": &l.BasicAPI, "dynamic_load": &l.DynamicLoad, "dynamic_switch": &l.DynamicSwitch,
		"multi_lora": &l.Multi} {
		var on *bool
		if o.boolean(key, &on) {
			*dst = *on
		}
	}
	return l, o
}
