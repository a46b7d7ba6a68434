package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/diffusion-check/diffusion-check/internal/media"
	"github.com/diffusion-check/diffusion-check/internal/media/mediatest"
	"github.com/diffusion-check/diffusion-check/results"
)

// asBuiltin rewrites a suite so that every server is the strict reference server configured as
// the model its command serves (the value after --model-path), with fast steps, and every
// MiniMax-H3 condition uri points at local, a readable video with audio (the reference server
// of CI reaches no network). Everything else of the suite stays as written.
func asBuiltin(t *testing.T, src []byte, local string) []byte {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		t.Fatal(err)
	}
	root := doc.Content[0]
	servers := mapValue(root, "servers")
	if servers == nil {
		t.Fatal("suite has no servers")
	}
	for i := 1; i < len(servers.Content); i += 2 {
		srv := servers.Content[i]
		cmdNode := mapValue(srv, "command")
		if cmdNode == nil {
			t.Fatalf("server %s has no command", servers.Content[i-1].Value)
		}
		model := ""
		for k, a := range cmdNode.Content {
			if a.Value == "--model-path" && k+1 < len(cmdNode.Content) {
				model = cmdNode.Content[k+1].Value
			}
		}
		if model == "" {
			t.Fatalf("server %s: no --model-path in its command", servers.Content[i-1].Value)
		}
		for k := 0; k < len(srv.Content); k += 2 {
			if srv.Content[k].Value == "command" {
				srv.Content[k].Value = "builtin"
				srv.Content[k+1] = &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
					{Kind: yaml.ScalarNode, Value: "model"}, {Kind: yaml.ScalarNode, Value: model},
					{Kind: yaml.ScalarNode, Value: "step_ms"}, {Kind: yaml.ScalarNode, Value: "0.2"},
				}}
			}
		}
	}
	var uris func(n *yaml.Node)
	uris = func(n *yaml.Node) {
		for k := 0; n.Kind == yaml.MappingNode && k+1 < len(n.Content); k += 2 {
			if n.Content[k].Value == "uri" {
				n.Content[k+1].Value = local
			}
		}
		for _, c := range n.Content {
			uris(c)
		}
	}
	uris(mapValue(root, "cases"))
	out, err := yaml.Marshal(&doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mapValue(m *yaml.Node, key string) *yaml.Node {
	for k := 0; m != nil && k+1 < len(m.Content); k += 2 {
		if m.Content[k].Value == key {
			return m.Content[k+1]
		}
	}
	return nil
}

// requireAllPass runs the suite's lane and fails unless every request of every case has
// output.present, output.valid and perf.record passing.
func requireAllPass(t *testing.T, cli func(args ...string) (string, int), suitePath, lane, out string) {
	t.Helper()
	args := []string{"run", "--suite", suitePath, "--out", out}
	if lane != "" {
		args = append(args, "--lane", lane)
	}
	log, _ := cli(args...)
	res, err := results.ReadContext(t.Context(), filepath.Join(filepath.Dir(suitePath), out, "results.json"))
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	if len(res.Cases) == 0 {
		t.Fatalf("lane %q ran no case\n%s", lane, log)
	}
	for _, c := range res.Cases {
		if len(c.Requests) == 0 {
			t.Errorf("case %s ran no request\n%s", c.ID, log)
		}
		for _, rr := range c.Requests {
			for _, name := range []string{results.OutputPresent, results.OutputValid, results.PerfRecord} {
				i := slices.IndexFunc(rr.Checks, func(ch results.Check) bool { return ch.Name == name })
				if i < 0 || rr.Checks[i].Status != results.Pass {
					t.Errorf("case %s request %d/%d: %s is not pass: %+v\n%s", c.ID, rr.Index, rr.Of, name, rr.Checks, log)
				}
			}
		}
	}
}

// TestSGLangExamplesPassOnReferenceServer runs both example suites, every lane, with each
// server replaced by the strict reference server as that model (MiniMax-H3 validates requests
// as SGLang's adapter does), so that an example SGLang would refuse fails here first.
func TestSGLangExamplesPassOnReferenceServer(t *testing.T) {
	t.Parallel() // self-contained: its servers and ffmpeg run beside the others' (TestMain)
	mediatest.NeedFFmpeg(t)
	if testing.Short() {
		t.Skip("renders 1344x768 videos of 107 frames")
	}
	examples := filepath.Join("..", "..", "examples", "sglang")
	for _, file := range []string{"h100.yaml", "5090.yaml"} {
		t.Run(file, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.CopyFS(dir, os.DirFS(examples)); err != nil {
				t.Fatal(err)
			}
			// A 4 s video with a soundtrack, in place of ref2va's https reference.
			ref := filepath.Join(dir, "ref2va_reference.mp4")
			if err := media.OnPath().EncodeVideo(t.Context(), ref, 64, 48, 96, 24, func(int, []byte) {},
				&media.ToneSpec{Tones: []media.Tone{{FreqHz: 440, Amplitude: 0.5}}}); err != nil {
				t.Fatal(err)
			}
			src, err := os.ReadFile(filepath.Join(dir, file))
			if err != nil {
				t.Fatal(err)
			}
			suitePath := filepath.Join(dir, "suite.yaml")
			if err := os.WriteFile(suitePath, asBuiltin(t, src, ref), 0o644); err != nil {
				t.Fatal(err)
			}
			var lanes []string
			for _, m := range regexp.MustCompile(`(?m)^\s+lane:\s*(\S+)`).FindAllStringSubmatch(string(src), -1) {
				if !slices.Contains(lanes, m[1]) {
					lanes = append(lanes, m[1])
				}
			}
			if len(lanes) == 0 {
				lanes = []string{""} // the default lane
			}
			cli := binCLI(t, dir, cleanEnv)
			for _, lane := range lanes {
				requireAllPass(t, cli, suitePath, lane, "out-"+lane)
			}
		})
	}
}

// TestREADMERealServerExamplePasses runs the README's real-server suite as written, its
// command replaced by the strict reference server as Qwen/Qwen-Image, and requires every
// request to pass with its performance.log record joined.
func TestREADMERealServerExamplePasses(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)gets a suite\\s+by hand:\\s+```yaml\\n(.*?)```").FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md: no yaml block after \"gets a suite by hand:\"")
	}
	if !strings.Contains(string(m[1]), "--model-path") {
		t.Fatalf("README's example has no --model-path:\n%s", m[1])
	}
	dir := t.TempDir()
	suitePath := filepath.Join(dir, "suite.yaml")
	if err := os.WriteFile(suitePath, asBuiltin(t, m[1], ""), 0o644); err != nil {
		t.Fatal(err)
	}
	requireAllPass(t, binCLI(t, dir, cleanEnv), suitePath, "", "out")
}
