package kernel_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// TestNoLegacySSEInKernels compiles the AVX2 kernels and looks at their machine code: a
// legacy-SSE instruction writing an XMM register inside a loop of 256-bit code (Go emits one,
// MOVQ GPR→XMM, for a vector shift by a variable count) made the AVX2 SSIM kernel 15 times
// slower on the GPU host's Xeon (docs/performance.md). The hot functions must have none.
func TestNoLegacySSEInKernels(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("amd64 kernels")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to compile with")
	}
	hot := map[string]bool{
		"internal/metrics.vAddRow2": true, "internal/metrics.vRow2": true,
		"internal/media.yuvRowAVX2": true,
	}
	cmd := exec.CommandContext(t.Context(), "go", "build", "-gcflags=-S", "../metrics", "../media")
	cmd.Env = append(cmd.Environ(), "GOEXPERIMENT=simd")
	var out bytes.Buffer
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("go build -gcflags=-S: %v\n%s", err, out.Bytes())
	}
	// MOVQ/MOVL/MOVD with an X register operand, not VEX-encoded (no V prefix).
	legacy := regexp.MustCompile(`\t(MOVQ|MOVL|MOVD|MOVSS|MOVSD|CVTS[SD]2S[SD]|CVTSQ2S[SD]|XORPS|PXOR)\t[^\n]*\bX([0-9]|1[0-5])\b`)
	var fn string
	seen := map[string]bool{}
	sc := bufio.NewScanner(&out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, " STEXT"); i > 0 && !strings.HasPrefix(line, "\t") {
			fn = line[:i]
			continue
		}
		for name := range hot {
			if strings.HasSuffix(fn, name) {
				seen[name] = true
				if legacy.MatchString(line) {
					t.Errorf("%s: legacy-SSE instruction in a 256-bit kernel: %s", name, strings.TrimSpace(line))
				}
			}
		}
	}
	for name := range hot {
		if !seen[name] {
			t.Errorf("%s: not found in the compiler's output (renamed? update this test)", name)
		}
	}
}
