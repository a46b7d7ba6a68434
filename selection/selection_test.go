package selection

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/suite"
)

// The repository of the tests: a suite in ci/ with its data files beside it.
const testSuite = `name: sel
baselines: perf
thresholds: thresholds
ground_truth: gt
known_failures: known.yaml
servers:
  qwen:
    builtin: {}
    paths: ["python/models/qwen/**", "kernels/**", "!kernels/**/*.md"]
  wan:
    builtin: {}
    paths: ["python/models/wan/**"]
  plain:
    builtin: {}
cases:
  - {id: qwen_t2i, server: qwen, modality: image, request: {size: 8x8}}
  - {id: qwen_edit, server: qwen, modality: image, request: {size: 8x8, images: [inputs/cat.png]}, paths: ["python/stages/edit/**"]}
  - {id: wan_t2v, server: wan, modality: video, num_gpus: 2, request: {size: 8x8}}
  - {id: wan_i2v, server: wan, modality: video, lane: extra, request: {size: 8x8, input_reference: inputs/beach.png}}
  - {id: always, server: plain, modality: image, request: {size: 8x8}}
`

// repo writes the test repository and returns its root and the suite read from it.
func repo(t *testing.T) (string, *suite.Suite) {
	t.Helper()
	files := map[string]string{
		"ci/suite.yaml":       testSuite,
		"ci/inputs/cat.png":   "png",
		"ci/inputs/beach.png": "png",
		"ci/known.yaml":       "[]\n",
		"ci/perf/h100.json": `{"tolerances": {"e2e": 0.1, "denoise_stage": 0.2, "non_denoise_stage": 0.3, "denoise_step": 0.4, "denoise_agg": 0.5},
 "sampling": {"step_fractions": [0.0, 1.0]},
 "scenarios": {"wan_t2v": {"stages_ms": {}, "denoise_step_ms": {}, "expected_e2e_ms": 100.0,
   "expected_avg_denoise_ms": 1.0, "expected_median_denoise_ms": 1.0}}}`,
		"ci/thresholds/h100.json": `{"cases": {"qwen_edit": {"ssim_threshold": 0.9}}}`,
		"ci/thresholds/b200.json": `{"cases": {"wan_t2v": {"ssim_threshold": 0.9}}, "default_ssim_threshold_image": 0.9}`,
		"ci/thresholds/bad.json":  `{"cases": {"x": {"nope": 1}}}`,
	}
	return writeRepo(t, files)
}

func TestSelect(t *testing.T) {
	root, s := repo(t)
	always := Pick{Case: "always", Lane: "base", Reason: "no paths: it always runs"}
	tests := []struct {
		name    string
		lane    string
		changed []string
		want    []Pick
		left    []string // the reasons of the deselected cases, "case: reason"
	}{
		{"nothing changed", "", nil, []Pick{always}, []string{
			"qwen_t2i: no changed path matches paths: python/models/qwen/**, kernels/**",
			"qwen_edit: no changed path matches paths: python/models/qwen/**, kernels/**, python/stages/edit/**",
			"wan_t2v: no changed path matches paths: python/models/wan/**",
			"wan_i2v: no changed path matches paths: python/models/wan/**",
		}},
		{"a server's glob selects its cases, ** spans folders", "", []string{"README.md", "python/models/qwen/dit/block.py"}, []Pick{
			{Case: "qwen_t2i", Lane: "base", Reason: "python/models/qwen/dit/block.py matches paths: python/models/qwen/**"},
			{Case: "qwen_edit", Lane: "base", Reason: "python/models/qwen/dit/block.py matches paths: python/models/qwen/**"},
			always,
		}, []string{
			"wan_t2v: no changed path matches paths: python/models/wan/**",
			"wan_i2v: no changed path matches paths: python/models/wan/**",
		}},
		{"a case's own glob adds to its server's", "", []string{"python/stages/edit/mask.py"}, []Pick{
			{Case: "qwen_edit", Lane: "base", Reason: "python/stages/edit/mask.py matches paths: python/stages/edit/**"},
			always,
		}, nil},
		{"** matches zero folders", "", []string{"kernels/gemm.cu"}, []Pick{
			{Case: "qwen_t2i", Lane: "base", Reason: "kernels/gemm.cu matches paths: kernels/**"},
			{Case: "qwen_edit", Lane: "base", Reason: "kernels/gemm.cu matches paths: kernels/**"},
			always,
		}, nil},
		{"a negation takes a path back out, and the reason says so", "", []string{"kernels/docs/README.md"}, []Pick{always}, []string{
			"qwen_t2i: no changed path matches paths: python/models/qwen/**, kernels/** (kernels/docs/README.md is taken out by !kernels/**/*.md)",
			"qwen_edit: no changed path matches paths: python/models/qwen/**, kernels/**, " +
				"python/stages/edit/** (kernels/docs/README.md is taken out by !kernels/**/*.md)",
			"wan_t2v: no changed path matches paths: python/models/wan/**",
			"wan_i2v: no changed path matches paths: python/models/wan/**",
		}},
		{"a glob does not match a longer name (no implicit prefix)", "", []string{"python/models/qwen2/x.py", "xkernels/a.cu"}, []Pick{always}, nil},
		{"the suite file selects every case", "", []string{"ci/suite.yaml"}, allFor("the suite file ci/suite.yaml changed"), nil},
		{"the known-failures file selects every case", "", []string{"ci/known.yaml"}, allFor("the known-failures file ci/known.yaml changed"), nil},
		{"a baseline file selects the cases it has entries for", "", []string{"ci/perf/h100.json"}, []Pick{
			{Case: "wan_t2v", Lane: "base", Reason: "the perf baseline file ci/perf/h100.json has an entry for it and changed"},
			always,
		}, nil},
		{"a baseline's spread sidecar selects the cases of the baseline", "", []string{"ci/perf/h100.spread.json"}, []Pick{
			{
				Case:   "wan_t2v",
				Lane:   "base",
				Reason: "the spread file ci/perf/h100.spread.json of the perf baseline file ci/perf/h100.json has an entry for it and changed",
			},
			always,
		}, nil},
		{"a deleted baseline file selects every case", "", []string{"ci/perf/h200.json"}, allFor("the perf baseline file ci/perf/h200.json was deleted"), nil},
		{"a thresholds file selects its entries", "", []string{"ci/thresholds/h100.json"}, []Pick{
			{Case: "qwen_edit", Lane: "base", Reason: "the consistency thresholds file ci/thresholds/h100.json has an entry for it and changed"},
			always,
		}, nil},
		{"a thresholds file with defaults also selects the cases that take them", "", []string{"ci/thresholds/b200.json"}, []Pick{
			{Case: "qwen_t2i", Lane: "base", Reason: "the consistency thresholds file ci/thresholds/b200.json changed, and it takes that file's defaults"},
			{Case: "qwen_edit", Lane: "base", Reason: "the consistency thresholds file ci/thresholds/b200.json changed, and it takes that file's defaults"},
			{Case: "wan_t2v", Lane: "base", Reason: "the consistency thresholds file ci/thresholds/b200.json has an entry for it and changed"},
			{Case: "wan_i2v", Lane: "extra", Reason: "the consistency thresholds file ci/thresholds/b200.json changed, and it takes that file's defaults"},
			{Case: "always", Lane: "base", Reason: "the consistency thresholds file ci/thresholds/b200.json changed, and it takes that file's defaults"},
		}, nil},
		{"a file beside the data files is not one", "", []string{"ci/perf/README.md", "ci/thresholds/sub/h100.json"}, []Pick{always}, nil},
		{"ground truth selects its case", "", []string{"ci/gt/wan_t2v_2gpu.mp4", "ci/gt/qwen_t2i_1gpu_frame_mid.png"}, []Pick{
			{Case: "qwen_t2i", Lane: "base", Reason: "its ground truth ci/gt/qwen_t2i_1gpu_frame_mid.png changed"},
			{Case: "wan_t2v", Lane: "base", Reason: "its ground truth ci/gt/wan_t2v_2gpu.mp4 changed"},
			always,
		}, nil},
		{
			"ground truth of another GPU count or name is not the case's",
			"",
			[]string{"ci/gt/wan_t2v_1gpu.mp4", "ci/gt/qwen_t2i_1gpu_x.png", "ci/gt/qwen_t2i_1gpu.png.orig"},
			[]Pick{always},
			nil,
		},
		{"input files select their case", "", []string{"ci/inputs/cat.png", "ci/inputs/beach.png"}, []Pick{
			{Case: "qwen_edit", Lane: "base", Reason: "its input file ci/inputs/cat.png changed"},
			{Case: "wan_i2v", Lane: "extra", Reason: "its input file ci/inputs/beach.png changed"},
			always,
		}, nil},
		{"a lane selects among its cases only", "extra", []string{"python/models/wan/vae.py"}, []Pick{
			{Case: "wan_i2v", Lane: "extra", Reason: "python/models/wan/vae.py matches paths: python/models/wan/**"},
		}, nil},
		{"the first reason wins", "", []string{"python/models/wan/vae.py", "ci/suite.yaml"}, []Pick{
			{Case: "qwen_t2i", Lane: "base", Reason: "the suite file ci/suite.yaml changed"},
			{Case: "qwen_edit", Lane: "base", Reason: "the suite file ci/suite.yaml changed"},
			{Case: "wan_t2v", Lane: "base", Reason: "the suite file ci/suite.yaml changed"},
			{Case: "wan_i2v", Lane: "extra", Reason: "the suite file ci/suite.yaml changed"},
			{Case: "always", Lane: "base", Reason: "the suite file ci/suite.yaml changed"},
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Select(Input{Suite: s, Lane: tt.lane, Root: root, Changed: tt.changed})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, out.Selected); diff != "" {
				t.Errorf("selected (-want +got):\n%s", diff)
			}
			// Every case of the lane is in exactly one list.
			n := len(s.CasesFor(tt.lane))
			if got := len(out.Selected) + len(out.Deselected); got != n {
				t.Errorf("%d selected + %d deselected, want %d cases", len(out.Selected), len(out.Deselected), n)
			}
			if tt.left != nil {
				var got []string
				for _, d := range out.Deselected {
					got = append(got, d.Case+": "+d.Reason)
				}
				if diff := cmp.Diff(tt.left, got); diff != "" {
					t.Errorf("deselected (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// allFor is every case of the test suite selected for one reason.
func allFor(reason string) []Pick {
	var out []Pick
	for _, c := range []struct{ id, lane string }{{"qwen_t2i", "base"}, {"qwen_edit", "base"}, {"wan_t2v", "base"}, {"wan_i2v", "extra"}, {"always", "base"}} {
		out = append(out, Pick{Case: c.id, Lane: c.lane, Reason: reason})
	}
	return out
}

func TestSelectBadDataFile(t *testing.T) {
	root, s := repo(t)
	_, err := Select(Input{Suite: s, Root: root, Changed: []string{"ci/thresholds/bad.json"}})
	if err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Fatalf("err = %v, want the broken thresholds file named", err)
	}
}

func TestSelectSuiteOutsideRepository(t *testing.T) {
	_, s := repo(t)
	other := t.TempDir()
	// The suite lies outside this root: its own files cannot be among the changes.
	out, err := Select(Input{Suite: s, Root: other, Changed: []string{"ci/suite.yaml", "../ci/suite.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"always"}, out.IDs()); diff != "" {
		t.Errorf("selected (-want +got):\n%s", diff)
	}
}

func TestSelectThroughSymlink(t *testing.T) {
	root, _ := repo(t)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(root, link); err != nil {
		t.Skip(err)
	}
	s, err := suite.Load(filepath.Join(link, "ci", "suite.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Select(Input{Suite: s, Root: root, Changed: []string{"ci/suite.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Deselected) != 0 {
		t.Errorf("a suite read through a link: deselected %v, want every case selected", out.Deselected)
	}
}

func TestSelectNoCases(t *testing.T) {
	root, s := repo(t)
	if _, err := Select(Input{Suite: s, Lane: "nope", Root: root}); err == nil {
		t.Fatal("a lane without cases: no error")
	}
}

func TestValidPath(t *testing.T) {
	for _, tt := range []struct{ path, want string }{
		{"python/sglang/x.py", ""},
		{"a b/ü.py", ""},
		{"a\x00b", `control character U+0000 in "a\x00b"`},
		{"a\nb", `control character U+000A in "a\nb"`},
		{"a\x1b[31mb", `control character U+001B in "a\x1b[31mb"`},
		{"/etc/passwd", `"/etc/passwd" is absolute; want a path relative to the repository root`},
		{"a/../b", `"a/../b" has a "." or ".." part; want a plain repository path`},
		{"./a", `"./a" has a "." or ".." part; want a plain repository path`},
		{"a//b", `"a//b" has an empty part; want a plain repository path`},
		{"a/", `"a/" has an empty part; want a plain repository path`},
	} {
		if got := ValidPath(tt.path); got != tt.want {
			t.Errorf("ValidPath(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}
