package baselines

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/diffusion-check/diffusion-check/internal/inputfile"
)

// The two sources of SGLang's ground-truth store, sgl-project/ci-data-diffusion's
// diffusion-ci/consistency_gt at a pinned commit (test_utils.py SGL_TEST_FILES_CI_DATA_REPO,
// SGL_TEST_FILES_CI_DATA_REVISION, pandalee99/sglang @ cce0a1244): official_generated holds
// outputs of the reference implementation (diffusers, …) for the cases its case_map.json
// lists, sglang_generated outputs of SGLang itself.
const (
	gtOfficial = "official_generated"
	gtSGLang   = "sglang_generated"
)

// caseMapMax bounds case_map.json, read as untrusted input (a pull request can change a store
// checked out in its workspace).
const caseMapMax = 4 << 20

// officialSkip is SGLang's OFFICIAL_CONSISTENCY_GT_SKIP_CASES (test_utils.py, pandalee99/sglang
// @ cce0a1244): cases whose official references "need regeneration or parity triage", so they
// read sglang_generated only, whatever case_map.json declares. Keyed by the raw case id.
var officialSkip = map[string]bool{
	"ltx_2_3_hq_pipeline":       true,
	"ltx_2_two_stage_t2v":       true,
	"qwen_image_edit_2509_ti2i": true,
}

// ascendSub is the subfolder of each source that holds an Ascend case's ground truth
// (SGL_TEST_FILES_OFFICIAL_CONSISTENCY_GT_BASE_ASCEND, SGL_TEST_FILES_SGLANG_CONSISTENCY_GT_BASE_ASCEND).
const ascendSub = "ascend/"

// sources are the store sources a case's ground truth is looked for in, in SGLang's order
// (_remote_consistency_gt_base_urls, pandalee99/sglang @ cce0a1244). A folder laid out as
// SGLang's store (it holds official_generated/ or sglang_generated/) gives official_generated,
// with only the files its case_map.json declares for the raw case id
// (_official_consistency_gt_outputs_for_case), when it declares any and the case is not in
// officialSkip, then sglang_generated; an Ascend case reads each source's ascend/ subfolder
// before the roots (official/ascend → sglang/ascend → official → sglang). Any other folder is
// one source, itself.
func (g GroundTruth) sources(caseID string) ([]gtFolder, error) {
	official := isDir(filepath.Join(g.Dir, gtOfficial))
	if !official && !isDir(filepath.Join(g.Dir, gtSGLang)) {
		return []gtFolder{{}}, nil
	}
	var declared map[string]bool
	if official && !officialSkip[caseID] {
		var err error
		if declared, err = readCaseMap(filepath.Join(g.Dir, gtOfficial, "case_map.json"), caseID); err != nil {
			return nil, err
		}
	}
	roots := []string{""}
	if ascendCase(caseID) {
		roots = []string{ascendSub, ""}
	}
	var out []gtFolder
	for _, sub := range roots {
		if len(declared) > 0 {
			out = append(out, gtFolder{prefix: gtOfficial + "/" + sub, source: gtOfficial, declared: declared})
		}
		out = append(out, gtFolder{prefix: gtSGLang + "/" + sub, source: gtSGLang})
	}
	return out, nil
}

// readCaseMap reads the outputs case_map.json declares for a case, by its raw id (not its
// ground-truth alias), as written: {"cases": {"<id>": {"outputs": ["<file>", …]}}}. A missing
// file declares nothing (SGLang warns and uses sglang_generated); a malformed one is an error
// naming it (stricter than SGLang's warning).
func readCaseMap(path, caseID string) (map[string]bool, error) {
	// Lookup takes no context: this is one bounded read of a local file.
	data, err := inputfile.Read(context.Background(), path, caseMapMax)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ground truth case map: %w", err)
	}
	var m struct {
		Cases map[string]struct {
			Outputs []string `json:"outputs"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("ground truth case map %s: %w", path, err)
	}
	out := map[string]bool{}
	for _, o := range m.Cases[caseID].Outputs {
		out[o] = true
	}
	return out, nil
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// Note names the ground-truth file a comparison used, relative to the ground-truth folder (so
// its first part is the store's source), and who made it, for the request's note:
// "ground truth: sglang_generated/h100/x_1gpu.png (made by SGLang)".
func (e GTEntry) Note() string {
	s := "ground truth: " + e.Name
	switch e.Source {
	case gtOfficial:
		s += " (made by the reference implementation)"
	case gtSGLang:
		s += " (made by SGLang)"
	}
	return s
}
