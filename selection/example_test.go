package selection

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/suite"
)

// TestExampleSGLang applies the imports: and paths: of examples/sglang to the changed files of
// real SGLang pull requests (testdata/sglang-prs.jsonl), with SGLang's import chains for those
// files (testdata/sglang-tree, see SOURCES.md) as the checkout's python/, and checks the
// verdict each of them calls for.
func TestExampleSGLang(t *testing.T) {
	want := map[int]bool{ // pull request → selects the MiniMax-H3 cases
		35105: true,  // srt/layers/moe/topk.py: imported through the pi05 pipeline the registry walks
		35064: false, // docs only
		34945: true,  // MiniMax-H3's text encoder and the Qwen3-VL encoder it builds on
		34769: false, // the LLM server's tokenizer manager, which the diffusion server never imports
		34848: true,  // a MiniMax-H3 pipeline stage
		33954: false, // Qwen-Image's DiT and a unit test: another family
		33878: false, // unit tests only
		31849: true,  // the diffusion runtime's shared layernorm
		29989: true,  // a server entrypoint
	}
	repo, err := filepath.Abs(filepath.Join(".."))
	if err != nil {
		t.Fatal(err)
	}
	tree, err := filepath.Abs(filepath.Join("testdata", "sglang-tree", "python"))
	if err != nil {
		t.Fatal(err)
	}
	// The checkout: the example suites where they are, SGLang's python/ beside them.
	root := t.TempDir()
	for link, target := range map[string]string{"examples": filepath.Join(repo, "examples"), "python": tree} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(filepath.Join("testdata", "sglang-prs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type pull struct {
		PR    int      `json:"pr"`
		Files []string `json:"files"`
	}
	var prs []pull
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var pr pull
		if err := json.Unmarshal(sc.Bytes(), &pr); err != nil {
			t.Fatal(err)
		}
		prs = append(prs, pr)
	}
	if len(prs) != len(want) {
		t.Fatalf("%d pull requests in the sample, want %d", len(prs), len(want))
	}
	for _, name := range []string{"h100.yaml", "5090.yaml"} {
		s, err := suite.Load(filepath.Join(root, "examples", "sglang", name))
		if err != nil {
			t.Fatal(err)
		}
		for _, pr := range prs {
			out, err := Select(Input{Suite: s, Root: root, Changed: pr.Files})
			if err != nil {
				t.Fatal(err)
			}
			all := len(out.Deselected) == 0
			if all != want[pr.PR] || len(out.Selected) != 0 && !all {
				t.Errorf("%s, pull request #%d: selected %v, deselected %v; want every case selected: %v", name, pr.PR, out.Selected, out.Deselected, want[pr.PR])
			}
			// Python below python/ is decided by the import graph, never by the globs.
			for _, p := range out.Selected {
				if !strings.Contains(p.Reason, " is imported by server ") {
					t.Errorf("%s, pull request #%d: %s selected for %q, not by the import graph", name, pr.PR, p.Case, p.Reason)
				}
			}
		}
	}
}
