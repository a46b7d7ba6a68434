package sglangcases

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tree is a copy of testdata/sglang, a package tree shaped like SGLang's (module paths and
// dataclass field names; the code is diffusion-check's own), in a temporary folder.
func tree(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "sglang")
	if err := os.CopyFS(dst, os.DirFS(filepath.Join("testdata", "sglang"))); err != nil {
		t.Fatal(err)
	}
	return dst
}

// python is the interpreter the tests run the exporter with: ./scripts/test installs python3
// (scripts/setup python3) where it is missing.
func python(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is needed to run SGLang's registry (scripts/setup python3): %v", err)
	}
	return p
}

// The exporter imports gpu_cases.py with SGLang's interpreter: the lists come in module order,
// a case built by replace() or a helper is there as built, an alias list is named as one, and
// what the modules print while they load stays off the JSON. A registry that needs a missing
// module is an ImportError naming it.
func TestExportRunsTheRegistry(t *testing.T) {
	root := tree(t)
	reg, err := Export(t.Context(), ExportOptions{Root: root, Python: python(t), Environ: os.Environ()})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range reg.Lists {
		got = append(got, l.Name+"="+l.AliasOf)
	}
	want := []string{"ONE_GPU_CASES=", "ONE_GPU_MODELOPT_CASES=", "ONE_GPU_B200_CASES=ONE_GPU_MODELOPT_CASES", "TWO_GPU_CASES="}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lists (-want +got):\n%s", diff)
	}
	two := reg.Lists[3].Cases[0]
	if two.ServerArgs.NumGPUs != 2 || *two.ServerArgs.UlyssesDegree != 2 || two.SamplingParams.Extras["quality"] != "exact" {
		t.Errorf("the _with_default_num_gpus case: %+v", two)
	}
	if reg.CIData.Revision != "15b30030ef980756788ab40072f9223fe21a5526" {
		t.Errorf("ci data: %+v", reg.CIData)
	}
	if err := os.WriteFile(filepath.Join(root, "python", "sglang", "multimodal_gen", "test", "server", "gpu_cases.py"),
		[]byte("import torch_not_here_either\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Export(t.Context(), ExportOptions{Root: root, Python: python(t), Environ: os.Environ()})
	var ie *ImportError
	if !errors.As(err, &ie) || ie.Module != "torch_not_here_either" {
		t.Errorf("missing module: %v", err)
	}
}

// A registry whose dataclasses have a field diffusion-check does not map fails, naming it.
func TestDecodeRefusesAnUnknownField(t *testing.T) {
	_, err := Decode([]byte(`{"fields": {"DiffusionSamplingParams": ["prompt", "new_knob"], "DiffusionTestCase": ["id"]}, "lists": []}`))
	if !errors.Is(err, ErrUnknownField) || !strings.Contains(err.Error(), "DiffusionSamplingParams.new_knob") {
		t.Errorf("got %v", err)
	}
	for _, c := range dataclasses {
		if len(knownFields(c.name)) == 0 {
			t.Errorf("%s: no fields", c.name)
		}
	}
}
