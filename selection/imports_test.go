package selection

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/suite"
)

// pyRepo is a repository shaped as SGLang's is, so that the built-in SGLang rules apply: a
// diffusion entry point, the pipeline registry that walks its package, the model registry
// that loads model modules by name, LazyImport, and modules of the LLM server that the
// diffusion server does or does not import.
var pyRepo = map[string]string{
	"python/sglang/__init__.py": "from sglang.utils import LazyImport\n" +
		"Engine = LazyImport(\"sglang.srt.entrypoints.engine\", \"Engine\")\n",
	"python/sglang/utils.py": "import importlib\nclass LazyImport:\n    def _load(self):\n" +
		"        return importlib.import_module(self.module_name)\n",
	"python/sglang/multimodal_gen/__init__.py": "",
	"python/sglang/multimodal_gen/registry.py": "import importlib, pkgutil\ndef _discover_and_register_pipelines():\n" +
		"    for _, name, _ in pkgutil.walk_packages(p):\n        importlib.import_module(name)\n",
	"python/sglang/multimodal_gen/runtime/__init__.py":                 "",
	"python/sglang/multimodal_gen/runtime/entrypoints/__init__.py":     "",
	"python/sglang/multimodal_gen/runtime/entrypoints/cli/__init__.py": "",
	"python/sglang/multimodal_gen/runtime/entrypoints/cli/serve.py": "from sglang.multimodal_gen import registry\n" +
		"from sglang.multimodal_gen.runtime.models.registry import ModelRegistry\nfrom sglang.srt.utils import common\nfrom . import start\n",
	"python/sglang/multimodal_gen/runtime/entrypoints/cli/start.py": "def start():\n    from sglang.srt.layers import lazy_target\n",
	"python/sglang/srt/layers/lazy_target.py":                       "",
	"python/sglang/multimodal_gen/runtime/pipelines/__init__.py":    "",
	"python/sglang/multimodal_gen/runtime/pipelines/qwen_image.py":  "",
	"python/sglang/multimodal_gen/runtime/pipelines/wan.py":         "",
	"python/sglang/multimodal_gen/runtime/models/__init__.py":       "",
	"python/sglang/multimodal_gen/runtime/models/registry.py": "import importlib\nclass _LazyRegisteredModel:\n    def load_model_cls(self):\n" +
		"        return importlib.import_module(self.module_name)\nclass ModelRegistry:\n    pass\n",
	"python/sglang/multimodal_gen/runtime/models/dits/__init__.py":   "",
	"python/sglang/multimodal_gen/runtime/models/dits/qwen_image.py": "",
	"python/sglang/multimodal_gen/runtime/models/dits/wanvideo.py":   "",
	"python/sglang/srt/__init__.py":                                  "",
	"python/sglang/srt/utils/__init__.py":                            "",
	"python/sglang/srt/utils/common.py":                              "import os\n",
	"python/sglang/srt/layers/__init__.py":                           "",
	"python/sglang/srt/layers/llm_only.py":                           "",
	"python/sglang/srt/entrypoints/__init__.py":                      "",
	"python/sglang/srt/entrypoints/engine.py":                        "",
	"csrc/kernel.cu": "",
	"ci/suite.yaml": `servers:
  qwen:
    builtin: {}
    paths: ["csrc/**"]
    imports:
      root: python
      modules: [sglang.multimodal_gen.runtime.entrypoints.cli.serve, sglang.multimodal_gen.runtime.models.dits.qwen_image]
  wan:
    builtin: {}
    imports:
      root: python
      modules: [sglang.multimodal_gen.runtime.entrypoints.cli.serve, sglang.multimodal_gen.runtime.models.dits.wanvideo]
cases:
  - {id: qwen_t2i, server: qwen, modality: image, request: {size: 8x8}}
  - {id: wan_t2v, server: wan, modality: video, request: {size: 8x8}}
`,
}

func writeRepo(t *testing.T, files map[string]string) (string, *suite.Suite) {
	t.Helper()
	root := t.TempDir()
	for name, data := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := suite.Load(filepath.Join(root, "ci", "suite.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return root, s
}

// TestSelectByImportGraph: a changed .py file selects the cases whose server imports it,
// however it is reached (a static import, a registry that walks a package, a module the
// suite names for the model registry, a LazyImport string); a file the server never imports
// selects nothing; other changes fall back to paths:.
func TestSelectByImportGraph(t *testing.T) {
	root, s := writeRepo(t, pyRepo)
	tests := []struct {
		name    string
		changed string
		want    map[string]string // selected case → part of its reason
	}{
		{"the model's own DiT", "python/sglang/multimodal_gen/runtime/models/dits/qwen_image.py",
			map[string]string{"qwen_t2i": "qwen_image.py is imported by server qwen"}},
		{"a pipeline the registry walks", "python/sglang/multimodal_gen/runtime/pipelines/wan.py",
			map[string]string{"qwen_t2i": "multimodal_gen.registry → sglang.multimodal_gen.runtime.pipelines.wan", "wan_t2v": "imported by server wan"}},
		{"an LLM module both servers import", "python/sglang/srt/utils/common.py",
			map[string]string{"qwen_t2i": "common.py is imported", "wan_t2v": "common.py is imported"}},
		{"a lazy import of the server's own package", "python/sglang/srt/layers/lazy_target.py",
			map[string]string{"qwen_t2i": "cli.start → sglang.srt.layers.lazy_target", "wan_t2v": "lazy_target.py is imported"}},
		{"a module named only by a LazyImport string outside the server's package (lazy: own)", "python/sglang/srt/entrypoints/engine.py", map[string]string{}},
		{"an LLM-only module", "python/sglang/srt/layers/llm_only.py", map[string]string{}},
		{"a deleted pipeline", "python/sglang/multimodal_gen/runtime/pipelines/gone.py",
			map[string]string{"qwen_t2i": "not in the tree", "wan_t2v": "not in the tree"}},
		{"a kernel: paths: for one, no paths: for the other", "csrc/kernel.cu",
			map[string]string{"qwen_t2i": "matches paths: csrc/**", "wan_t2v": "outside the Python tree python/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Select(Input{Suite: s, Root: root, Changed: []string{tt.changed}})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, p := range out.Selected {
				got[p.Case] = p.Reason
				if !strings.Contains(p.Reason, tt.want[p.Case]) || tt.want[p.Case] == "" {
					t.Errorf("%s selected: %s (want a reason with %q)", p.Case, p.Reason, tt.want[p.Case])
				}
			}
			for id := range tt.want {
				if _, ok := got[id]; !ok {
					t.Errorf("%s not selected", id)
				}
			}
			for _, d := range out.Deselected {
				if !strings.Contains(d.Reason, "no changed Python file is among the") {
					t.Errorf("%s deselected: %s", d.Case, d.Reason)
				}
			}
		})
	}
}

// TestSelectImportGraphLazyAll: with imports.lazy: all, a module that only a LazyImport
// string of another package names selects too.
func TestSelectImportGraphLazyAll(t *testing.T) {
	files := map[string]string{}
	for k, v := range pyRepo {
		files[k] = v
	}
	files["ci/suite.yaml"] = strings.ReplaceAll(files["ci/suite.yaml"], "      root: python\n", "      root: python\n      lazy: all\n")
	root, s := writeRepo(t, files)
	out, err := Select(Input{Suite: s, Root: root, Changed: []string{"python/sglang/srt/entrypoints/engine.py"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Selected) != 2 || !strings.Contains(out.Selected[0].Reason, "sglang → sglang.srt.entrypoints.engine") {
		t.Errorf("lazy: all: %+v", out.Selected)
	}
}

// TestSelectImportGraphErrsTowardRunning: an import by a computed name that no rule
// resolves, or a source root that is not there, selects on every Python change and says
// why; a suite rule resolves the call.
func TestSelectImportGraphErrsTowardRunning(t *testing.T) {
	files := map[string]string{}
	for k, v := range pyRepo {
		files[k] = v
	}
	files["python/sglang/multimodal_gen/runtime/entrypoints/cli/serve.py"] += "import importlib\ndef plugin(name):\n    return importlib.import_module(name)\n"
	root, s := writeRepo(t, files)
	changed := []string{"python/sglang/srt/layers/llm_only.py"}
	out, err := Select(Input{Suite: s, Root: root, Changed: changed})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Selected) != 2 || !strings.Contains(out.Selected[0].Reason, "(plugin) line 7: import_module by a computed name, which no rule resolves") {
		t.Errorf("an unresolved computed import: %+v", out.Selected)
	}

	files["ci/suite.yaml"] = strings.ReplaceAll(files["ci/suite.yaml"], "    imports:\n      root: python\n",
		"    imports:\n      root: python\n      dynamic: [{module: sglang.multimodal_gen.runtime.entrypoints.cli.serve, function: plugin, loads: outside}]\n")
	root, s = writeRepo(t, files)
	out, err = Select(Input{Suite: s, Root: root, Changed: changed})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Selected) != 0 {
		t.Errorf("with a rule for it: %+v", out.Selected)
	}

	files["ci/suite.yaml"] = strings.ReplaceAll(files["ci/suite.yaml"], "root: python", "root: src")
	root, s = writeRepo(t, files)
	out, err = Select(Input{Suite: s, Root: root, Changed: []string{"src/x.py"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Pick{
		{
			Case: "qwen_t2i",
			Lane: "base",
			Reason: "src/x.py may affect it: the import graph of server qwen cannot be read (python source root: stat " + filepath.Join(
				root,
				"src",
			) + ": no such file or directory)",
		},
		{
			Case: "wan_t2v",
			Lane: "base",
			Reason: "src/x.py may affect it: the import graph of server wan cannot be read (python source root: stat " + filepath.Join(
				root,
				"src",
			) + ": no such file or directory)",
		},
	}
	if diff := cmp.Diff(want, out.Selected); diff != "" {
		t.Errorf("no source root (-want +got):\n%s", diff)
	}
}
