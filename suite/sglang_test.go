package suite

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSuiteRefusesWhatSGLangRefuses: a suite is refused at load, with file:line, for request
// values SGLang's request models refuse (protocol.py): a fractional seconds for every server,
// and for `sglang serve` servers the extra fields whose type pydantic refuses.
func TestSuiteRefusesWhatSGLangRefuses(t *testing.T) {
	const servers = `servers:
  sglang: {command: [sglang, serve, --model-type, diffusion, --model-path, m, --port, "{port}"]}
  ref: {builtin: {}}
cases:
`
	for _, tt := range []struct {
		name, cases string
		want        []string
	}{
		{"fractional seconds", `  - {id: a, server: ref, modality: video, request: {size: 8x8, seconds: 2.5}}
`, []string{
			"suite.yaml:5: cases[0].request.seconds: want a whole number of seconds, got 2.5: " +
				"SGLang's VideoGenerationsRequest declares seconds as an int (protocol.py) and refuses a fraction",
		}},
		{"extra field types for sglang serve", `  - id: v
    server: sglang
    modality: video
    request:
      size: 8x8
      extra:
        num_frames: 2.5
        seconds: "four"
        guidance_scale: high
        negative_prompt: 7
        enable_teacache: maybe
        seed: [1, 2.5]
        diffusers_kwargs: [a]
        target: {short_edge: 768}
  - id: i
    server: sglang
    modality: image
    request:
      size: 8x8
      extra: {n: 1.5, output_format: [png]}
`, []string{
			`suite.yaml:11: cases[0].request.extra.num_frames: want an integer, got the number 2.5: SGLang's VideoGenerationsRequest (protocol.py) ` +
				`refuses it: every request would fail with HTTP 400 or 422`,
			`suite.yaml:12: cases[0].request.extra.seconds: want an integer, got the string "four": SGLang's VideoGenerationsRequest (protocol.py) ` +
				`refuses it: every request would fail with HTTP 400 or 422`,
			`suite.yaml:13: cases[0].request.extra.guidance_scale: want a number, got the string "high": SGLang's VideoGenerationsRequest (protocol.py) ` +
				`refuses it: every request would fail with HTTP 400 or 422`,
			`suite.yaml:14: cases[0].request.extra.negative_prompt: want a string, got the integer 7: SGLang's VideoGenerationsRequest (protocol.py) ` +
				`refuses it: every request would fail with HTTP 400 or 422`,
			`suite.yaml:15: cases[0].request.extra.enable_teacache: want true or false, got the string "maybe": ` +
				`SGLang's VideoGenerationsRequest (protocol.py) refuses it: every request would fail with HTTP 400 or 422`,
			`suite.yaml:16: cases[0].request.extra.seed: want an integer or a list of integers, got a list: SGLang's VideoGenerationsRequest (protocol.py) ` +
				`refuses it: every request would fail with HTTP 400 or 422`,
			`suite.yaml:17: cases[0].request.extra.diffusers_kwargs: want a mapping, got a list: SGLang's VideoGenerationsRequest (protocol.py) refuses it: ` +
				`every request would fail with HTTP 400 or 422`,
			`suite.yaml:24: cases[1].request.extra.n: want an integer, got the number 1.5: SGLang's ImageGenerationsRequest (protocol.py) refuses it: ` +
				`every request would fail with HTTP 400 or 422`,
			`suite.yaml:24: cases[1].request.extra.output_format: want a string, got a list: SGLang's ImageGenerationsRequest (protocol.py) refuses it: ` +
				`every request would fail with HTTP 400 or 422`,
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("suite.yaml", []byte(servers+tt.cases))
			if diff := cmp.Diff(tt.want, errLines(err)); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSuiteAcceptsWhatSGLangAccepts: values pydantic's lax mode reads (a float without a
// fraction for an int, numeric strings, bool words, a seed list, unknown extra keys, which
// the models allow) pass; a server that is not `sglang serve` gets no SGLang type checks.
func TestSuiteAcceptsWhatSGLangAccepts(t *testing.T) {
	data := `servers:
  sglang: {command: [/opt/venv/bin/sglang, serve, --model-path, m, --port, "{port}"]}
  other: {command: [python, -m, my.server, --port, "{port}"]}
cases:
  - id: v
    server: sglang
    modality: video
    request:
      size: 8x8
      seconds: 4.0
      extra: {num_frames: "97", fps: 24.0, guidance_scale: "5", enable_teacache: "yes", profile: 0, seed: [1, 2],
              diffusers_kwargs: {a: 1}, task: t2va, conditions: [], target: {short_edge: 768}, width: null}
  - id: o
    server: other
    modality: video
    request: {size: 8x8, extra: {num_frames: 2.5}}
`
	s, err := Parse("suite.yaml", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Cases[0].Request.Seconds; got != 4 {
		t.Errorf("seconds %d, want 4", got)
	}
}

// TestSGLangServe tells SGLang's diffusion server command from others.
func TestSGLangServe(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want bool
	}{
		{[]string{"sglang", "serve", "--model-path", "m"}, true},
		{[]string{"/venv/bin/sglang", "serve", "--model-type", "diffusion"}, true},
		{[]string{"sglang", "serve", "--model-type=auto"}, true},
		{[]string{"sglang", "serve", "--model-type", "llm"}, false},
		{[]string{"sglang", "generate"}, false},
		{[]string{"python", "-m", "sglang.launch_server"}, false},
		{[]string{"sglang"}, false},
	} {
		if got := SGLangServe(tc.argv); got != tc.want {
			t.Errorf("SGLangServe(%q) = %v, want %v", tc.argv, got, tc.want)
		}
	}
}

// TestFlagGiven finds an option given whole, with "=", abbreviated (argparse allow_abbrev),
// or possibly through --config.
func TestFlagGiven(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want bool
	}{
		{[]string{"sglang", "serve", "--output-path", "x"}, true},
		{[]string{"sglang", "serve", "--output-path=x"}, true},
		{[]string{"sglang", "serve", "--output-p", "x"}, true},
		{[]string{"sglang", "serve", "--config", "c.yaml"}, true},
		{[]string{"sglang", "serve", "--output-path-extra", "x"}, false},
		{[]string{"sglang", "serve", "--", "x"}, false},
		{[]string{"sglang", "serve", "--model-path", "outputs"}, false},
	} {
		if got := FlagGiven(tc.argv, "--output-path"); got != tc.want {
			t.Errorf("FlagGiven(%q) = %v, want %v", tc.argv, got, tc.want)
		}
	}
}

// TestSGLangServePort: `sglang serve` listens on the last --port given (argparse) or on its
// default 30000 without one, so a command whose port is not diffusion-check's is refused at
// load; a --config file or an abbreviation, which may set it, is not judged.
func TestSGLangServePort(t *testing.T) {
	for _, tc := range []struct {
		name    string
		command string
		want    []string
	}{
		{"no --port", `[sglang, serve, --model-path, m, --strict-ports]
    env: {X: "{port}"}`, []string{
			`suite.yaml:3: servers.s.command: no --port: sglang serve would listen on its default port 30000 (server_args.py ServerArgs.port), ` +
				`not on the one diffusion-check picks; add --port, "{port}"`,
		}},
		{"a later --port wins", `[sglang, serve, --port, "{port}", --port, "30001"]`, []string{
			`suite.yaml:3: servers.s.command: the last --port is "30001", and sglang serve listens on the last one given (argparse); ` +
				`diffusion-check talks to "{port}" only`,
		}},
		{"--port=", `[sglang, serve, "--port={port}"]`, nil},
		{"--config may set it", `[sglang, serve, --config, c.yaml, --model-path, "{port}"]`, nil},
		{"abbreviated", `[sglang, serve, --por, "{port}"]`, nil},
		{"another backend", `[sglang, serve, --model-type, llm, --model-path, "{port}"]`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := "servers:\n  s:\n    command: " + tc.command + "\ncases:\n  - {id: a, server: s, modality: image, request: {size: 8x8}}\n"
			_, err := Parse("suite.yaml", []byte(data))
			if diff := cmp.Diff(tc.want, errLines(err)); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSGLangServeFlagValues: an option of `sglang serve` whose value argparse refuses
// (server_args.py: type=int or float, a literal list of choices) is refused at load with
// argparse's words; values argparse takes (Python's int() and float(), placeholders filled
// later) pass.
func TestSGLangServeFlagValues(t *testing.T) {
	const suffix = " (server_args.py)"
	for _, tc := range []struct {
		name    string
		command string
		want    []string
	}{
		{"bad values", `[sglang, serve, --port, "{port}", --num-gpus, two, --dit-offload-prefetch-size=lots, --log-requests-format, yaml, ` +
			`--kv-cache-quant-sink, "2", --tp-size]`, []string{
			`suite.yaml:3: servers.s.command: argument --num-gpus: invalid int value: 'two': sglang serve would stop at once` + suffix,
			`suite.yaml:3: servers.s.command: argument --dit-offload-prefetch-size: invalid float value: 'lots': sglang serve would stop at once` + suffix,
			`suite.yaml:3: servers.s.command: argument --log-requests-format: invalid choice: 'yaml' (choose from text, json): sglang serve would stop at once` + suffix,
			`suite.yaml:3: servers.s.command: argument --kv-cache-quant-sink: invalid choice: '2' (choose from 0, 1): sglang serve would stop at once` + suffix,
			`suite.yaml:3: servers.s.command: argument --tp-size: expected one argument: sglang serve would stop at once` + suffix,
		}},
		{"values argparse takes", `[sglang, serve, --port, "{port}", --num-gpus, " 2 ", --dp, "1_0", --base-gpu-id, "-1", ` +
			`--dit-layerwise-resident-layers, "1e1", --kv-cache-quant-sink, "01", --log-requests-format=json, --master-port, "{port}"]`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := "servers:\n  s:\n    command: " + tc.command + "\ncases:\n  - {id: a, server: s, modality: image, request: {size: 8x8}}\n"
			_, err := Parse("suite.yaml", []byte(data))
			if diff := cmp.Diff(tc.want, errLines(err)); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}
