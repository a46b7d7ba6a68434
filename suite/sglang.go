package suite

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/diffusion-check/diffusion-check/internal/strictdecode"
	"gopkg.in/yaml.v3"
)

// This file holds what the suite knows of SGLang's own rules, so that a suite is refused at
// load for what SGLang would refuse on the GPU runner, after the model has loaded. Each rule
// names its source in SGLang (python/sglang/multimodal_gen/, upstream as of 2026-08-17;
// docs/sglang-compat.md, "Runner behaviour against SGLang (client side)").

// SGLangServe reports whether a server command is SGLang's diffusion server: `sglang serve`
// (python/sglang/cli/main.py) with no --model-type or --model-type diffusion or auto
// (cli/serve.py _extract_model_type_override; "auto" detects a diffusion model from its path).
func SGLangServe(argv []string) bool {
	if len(argv) < 2 || filepath.Base(argv[0]) != "sglang" || argv[1] != "serve" {
		return false
	}
	for i, a := range argv {
		var t string
		switch {
		case a == "--model-type" && i+1 < len(argv):
			t = argv[i+1]
		case strings.HasPrefix(a, "--model-type="):
			t = strings.TrimPrefix(a, "--model-type=")
		default:
			continue
		}
		if t != "diffusion" && t != "auto" {
			return false
		}
	}
	return true
}

// FlagGiven reports whether a command line sets the argparse option flag ("--output-path"):
// as "--flag value", as "--flag=value", or by an abbreviation of it, which argparse accepts
// (the diffusion parser is built with allow_abbrev left on: cli/serve.py _run_diffusion). A
// "--config" file may set any option, so it counts as setting every one
// (ServerArgs.from_cli_args merges the file under the command line).
func FlagGiven(argv []string, flag string) bool {
	for _, a := range argv {
		name, _, _ := strings.Cut(a, "=")
		if name == "--config" || len(name) > 3 && strings.HasPrefix(name, "--") && strings.HasPrefix(flag, name) {
			return true
		}
	}
	return false
}

// pyType is the type of a field of SGLang's pydantic request models, as pydantic checks it
// in its default (lax) mode.
type pyType int

const (
	pyInt   pyType = iota // Optional[int]: an int, a float without a fraction, or such a string
	pyFloat               // Optional[float]: a number, or a numeric string
	pyStr                 // Optional[str]: a string only (pydantic 2 turns no number into a string)
	pyBool                // Optional[bool]: true/false, 0/1, or one of pydantic's bool words
	pyDict                // Optional[Dict[str, Any]]: a mapping
	pySeed                // Optional[Union[int, List[int]]]: an int or a list of ints
)

// Field types of VideoGenerationsRequest and ImageGenerationsRequest
// (runtime/entrypoints/openai/protocol.py). Both models allow extra fields (extra="allow"),
// so a key not listed is passed on unchecked.
var (
	videoFields = map[string]pyType{
		"prompt": pyStr, "input_reference": pyStr, "reference_url": pyStr, "video_path": pyStr, "video_url": pyStr,
		"model": pyStr, "n": pyInt, "num_outputs_per_prompt": pyInt, "seconds": pyInt, "size": pyStr, "fps": pyInt,
		"num_frames": pyInt, "seed": pySeed, "generator_device": pyStr, "width": pyInt, "height": pyInt,
		"num_inference_steps": pyInt, "guidance_scale": pyFloat, "guidance_scale_2": pyFloat, "true_cfg_scale": pyFloat,
		"negative_prompt": pyStr, "max_sequence_length": pyInt, "flow_shift": pyFloat, "enable_teacache": pyBool,
		"enable_frame_interpolation": pyBool, "frame_interpolation_exp": pyInt, "frame_interpolation_scale": pyFloat,
		"frame_interpolation_model_path": pyStr, "enable_upscaling": pyBool, "upscaling_model_path": pyStr,
		"upscaling_scale": pyInt, "output_quality": pyStr, "output_compression": pyInt, "output_path": pyStr,
		"diffusers_kwargs": pyDict, "perf_dump_path": pyStr, "profile": pyBool, "num_profiled_timesteps": pyInt,
		"profile_all_stages": pyBool,
	}
	imageFields = map[string]pyType{
		"prompt": pyStr, "model": pyStr, "n": pyInt, "quality": pyStr, "response_format": pyStr, "size": pyStr,
		"style": pyStr, "background": pyStr, "output_format": pyStr, "user": pyStr, "width": pyInt, "height": pyInt,
		"num_inference_steps": pyInt, "guidance_scale": pyFloat, "true_cfg_scale": pyFloat, "seed": pySeed,
		"generator_device": pyStr, "negative_prompt": pyStr, "output_quality": pyStr, "output_compression": pyInt,
		"enable_teacache": pyBool, "max_sequence_length": pyInt, "flow_shift": pyFloat, "enable_upscaling": pyBool,
		"upscaling_model_path": pyStr, "upscaling_scale": pyInt, "diffusers_kwargs": pyDict, "perf_dump_path": pyStr,
		"progressive_mode": pyStr, "progressive_levels": pyInt, "progressive_delta": pyFloat,
	}
)

// pydanticBools are the strings pydantic 2 reads as a bool (its bool_parsing rule).
var pydanticBools = []string{"0", "off", "f", "false", "n", "no", "1", "on", "t", "true", "y", "yes"}

// wholeSeconds checks a request's seconds: SGLang declares it Optional[int]
// (protocol.py VideoGenerationsRequest; video_api.create_video's Form field too), and
// pydantic refuses a number with a fraction, so the server answers HTTP 400 (JSON) or 422
// (multipart). A float without a fraction is an int to pydantic.
func (d *decoder) wholeSeconds(line int, field string, v float64) (int, bool) {
	if v != math.Trunc(v) || v > math.MaxInt32 {
		d.Addf(line, field,
			"want a whole number of seconds, got %v: SGLang's VideoGenerationsRequest declares seconds as an int (protocol.py) and refuses a fraction",
			v)
		return 0, false
	}
	return int(v), true
}

// sglangExtra checks the extra request fields of a case sent to `sglang serve` against the
// field types of SGLang's request model for the modality: a value pydantic would refuse
// makes every request of the case fail with HTTP 400 or 422.
func (d *decoder) sglangExtra(raw *yaml.Node, field string, modality Modality) {
	fields := videoFields
	model := "VideoGenerationsRequest"
	if modality == Image {
		fields, model = imageFields, "ImageGenerationsRequest"
	}
	n := strictdecode.Deref(raw)
	if n == nil || n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		t, known := fields[key.Value]
		if !known || strictdecode.IsNull(val) {
			continue
		}
		if want := pydanticRefuses(t, strictdecode.Deref(val)); want != "" {
			d.Addf(val.Line, strictdecode.Join(field, key.Value),
				"want %s, got %s: SGLang's %s (protocol.py) refuses it: every request would fail with HTTP 400 or 422", want, describeValue(val),
				model)
		}
	}
}

// pydanticRefuses returns what type t takes when pydantic (lax mode) would refuse the value
// n for it, or "" when it would accept it. Only refusals that are certain are reported.
func pydanticRefuses(t pyType, n *yaml.Node) string {
	v := readScalar(n)
	switch t {
	case pyInt:
		if !v.boolean && (!v.numeric || v.num != math.Trunc(v.num)) {
			return "an integer"
		}
	case pySeed:
		return seedRefused(n)
	case pyFloat:
		if !v.boolean && !v.numeric {
			return "a number"
		}
	case pyStr:
		if !v.scalar || v.tag != "!!str" {
			return "a string"
		}
	case pyBool:
		if !pydanticBool(n, v) {
			return "true or false"
		}
	case pyDict:
		if n.Kind != yaml.MappingNode {
			return "a mapping"
		}
	}
	return ""
}

// scalarRead is what pydanticRefuses reads of a YAML node: whether it is a scalar, its tag,
// and its number when it is one (a numeric string is one too, as pydantic's lax mode reads
// it); pydantic reads a bool as 0 or 1 for a number field.
type scalarRead struct {
	scalar, numeric, boolean bool
	tag                      string
	num                      float64
}

func readScalar(n *yaml.Node) scalarRead {
	v := scalarRead{scalar: n.Kind == yaml.ScalarNode, tag: n.ShortTag()}
	switch {
	case v.scalar && (v.tag == "!!int" || v.tag == "!!float"):
		v.numeric = n.Decode(&v.num) == nil
	case v.scalar && v.tag == "!!str":
		f, err := strconv.ParseFloat(strings.TrimSpace(n.Value), 64)
		v.num, v.numeric = f, err == nil
	}
	v.boolean = v.scalar && v.tag == "!!bool"
	return v
}

// seedRefused is pydanticRefuses for a seed: an integer or a list of integers.
func seedRefused(n *yaml.Node) string {
	const want = "an integer or a list of integers"
	if n.Kind == yaml.SequenceNode {
		for _, e := range n.Content {
			if pydanticRefuses(pyInt, strictdecode.Deref(e)) != "" {
				return want
			}
		}
		return ""
	}
	if pydanticRefuses(pyInt, n) != "" {
		return want
	}
	return ""
}

// pydanticBool reports whether pydantic's lax mode reads n as a bool: true or false, the
// numbers 0 and 1, or one of its bool strings.
func pydanticBool(n *yaml.Node, v scalarRead) bool {
	switch {
	case v.boolean:
		return true
	case v.numeric && v.tag != "!!str" && (v.num == 0 || v.num == 1):
		return true
	case v.scalar && v.tag == "!!str" && slices.Contains(pydanticBools, strings.ToLower(strings.TrimSpace(n.Value))):
		return true
	}
	return false
}

// describeValue names a value with its YAML type, as pydantic's message would.
func describeValue(n *yaml.Node) string {
	d := strictdecode.Deref(n)
	if d.Kind != yaml.ScalarNode {
		return strictdecode.Describe(n)
	}
	switch d.ShortTag() {
	case "!!int":
		return "the integer " + d.Value
	case "!!float":
		return "the number " + d.Value
	case "!!bool":
		return d.Value
	}
	return "the string " + strictdecode.Describe(n)
}

// requestExtra finds the "extra" mapping of a request node.
func requestExtra(request *yaml.Node) (*yaml.Node, int, bool) {
	n := strictdecode.Deref(request)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, 0, false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "extra" {
			return n.Content[i+1], n.Content[i].Line, true
		}
	}
	return nil, 0, false
}

// sglangDefaultPort is where `sglang serve` listens without --port (server_args.py
// ServerArgs.port).
const sglangDefaultPort = 30000

// sglangPort says why an `sglang serve` command would not listen on the port diffusion-check
// picks, or "": it has no --port (SGLang then listens on its default), or its last --port,
// the one argparse keeps, is not "{port}". A --config file, or an abbreviation of --port
// (argparse accepts one), may set the port too; such a command is not judged.
func sglangPort(argv []string) string {
	last, found := "", false
	for i, a := range argv {
		name, value, hasValue := strings.Cut(a, "=")
		switch {
		case name == "--config", strings.HasPrefix(name, "--po") && name != "--port" && strings.HasPrefix("--port", name):
			return ""
		case name != "--port":
			continue
		case hasValue:
			last, found = value, true
		case i+1 < len(argv):
			last, found = argv[i+1], true
		}
	}
	switch {
	case !found:
		return fmt.Sprintf(
			"no --port: sglang serve would listen on its default port %d (server_args.py ServerArgs.port), not on the one diffusion-check picks; add --port, \"{port}\"",
			sglangDefaultPort,
		)
	case !strings.Contains(last, "{port}"):
		return fmt.Sprintf("the last --port is %q, and sglang serve listens on the last one given (argparse); diffusion-check talks to \"{port}\" only", last)
	}
	return ""
}

// sglangFlag is one option of `sglang serve` whose value argparse checks: Type "int" or
// "float" (argparse's type=int or float) or "str"; Choices, when set, the values it takes.
type sglangFlag struct {
	Names   []string
	Type    string
	Choices []string
}

// sglangFlagValues says, for each option of sglangValueFlags that an `sglang serve` command
// gives with a value argparse refuses, what argparse would say: the server exits at once
// with that message ("argument --num-gpus: invalid int value: 'two'"). Only options written
// whole are checked (an abbreviation is left to argparse), and a value holding a
// placeholder ("{port}") is checked once filled, by SGLang.
func sglangFlagValues(argv []string) []string {
	byName := map[string]sglangFlag{}
	for _, f := range sglangValueFlags {
		for _, n := range f.Names {
			byName[n] = f
		}
	}
	var problems []string
	for i := 2; i < len(argv); i++ {
		name, value, hasValue := strings.Cut(argv[i], "=")
		f, ok := byName[name]
		if !ok {
			continue
		}
		if !hasValue {
			if i+1 >= len(argv) || strings.HasPrefix(argv[i+1], "--") {
				problems = append(problems, fmt.Sprintf("argument %s: expected one argument", name))
				continue
			}
			i++
			value = argv[i]
		}
		if strings.Contains(value, "{") {
			continue
		}
		if p := pythonValueProblem(f, value); p != "" {
			problems = append(problems, fmt.Sprintf("argument %s: %s", name, p))
		}
	}
	return problems
}

// pythonValueProblem is argparse's complaint about value for f, or "" when it takes it: the
// value goes through Python's int() or float() (which strip spaces and allow "_" between
// digits), then is looked up in the choices.
func pythonValueProblem(f sglangFlag, value string) string {
	v := strings.ReplaceAll(strings.TrimSpace(value), "_", "")
	switch f.Type {
	case "int":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Sprintf("invalid int value: '%s'", value)
		}
		v = strconv.FormatInt(n, 10)
	case "float":
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return fmt.Sprintf("invalid float value: '%s'", value)
		}
	default:
		v = value
	}
	if f.Choices != nil && !slices.Contains(f.Choices, v) {
		return fmt.Sprintf("invalid choice: '%s' (choose from %s)", value, strings.Join(f.Choices, ", "))
	}
	return ""
}
