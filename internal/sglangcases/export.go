package sglangcases

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/diffusion-check/diffusion-check/internal/proc"
)

//go:embed exporter.py
var exporter []byte

// maxExportBytes bounds the exporter's output: SGLang's registry of a few hundred cases is well
// under 1 MiB.
const maxExportBytes = 64 << 20

// ExportOptions say where SGLang is and what to read of it.
type ExportOptions struct {
	// Root is SGLang's checkout; its python/ goes first on PYTHONPATH, ahead of any installed
	// copy.
	Root string
	// Python is the interpreter (default python3), looked up on PATH.
	Python string
	// Lists names the module-level lists of gpu_cases.py to read; empty: every list of
	// DiffusionTestCase.
	Lists []string
	// Environ is the environment the exporter starts from (cmd passes the process's).
	Environ []string
	// Timeout bounds the import (default 5 minutes: SGLang's import pulls in torch).
	Timeout time.Duration
}

// ErrNoCheckout is returned (wrapped) for a root that is no SGLang checkout.
var ErrNoCheckout = errors.New("not the root of an SGLang checkout")

// ImportError is an exporter that could not import SGLang's registry: Module is the missing
// module, when that is why.
type ImportError struct {
	Module string
	Detail string
}

func (e *ImportError) Error() string {
	if e.Module != "" {
		return fmt.Sprintf("SGLang's registry cannot be imported: missing module %q. The job that writes the suite needs SGLang installed "+
			"with its dependencies (pip install -e python, or SGLang's scripts/ci/ci_install_dependency.sh) and --sglang-root at its checkout",
			e.Module)
	}
	return "SGLang's registry cannot be imported: " + e.Detail
}

// Export runs the exporter with SGLang's interpreter and decodes what it printed. The exporter
// runs with the GPUs hidden (CUDA_VISIBLE_DEVICES and HIP_VISIBLE_DEVICES empty) and the Hugging
// Face libraries offline, and writes no bytecode into the checkout.
func Export(ctx context.Context, o ExportOptions) (*Registry, error) {
	root, err := filepath.Abs(o.Root)
	if err != nil {
		return nil, err
	}
	pyDir := filepath.Join(root, "python")
	if fi, err := os.Stat(filepath.Join(pyDir, "sglang")); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%w: %s has no python/sglang folder", ErrNoCheckout, o.Root)
	}
	python := o.Python
	if python == "" {
		python = "python3"
	}
	dir, err := os.MkdirTemp("", "diffusion-check-sglang-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	script := filepath.Join(dir, "exporter.py")
	if err := os.WriteFile(script, exporter, 0o600); err != nil {
		return nil, err
	}
	timeout := o.Timeout
	if timeout == 0 {
		timeout = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := proc.Command(ctx, 5*time.Second, python, script, strings.Join(o.Lists, ","))
	cmd.Dir = dir
	cmd.Env = exporterEnv(o.Environ, pyDir)
	stdout := &proc.Head{N: maxExportBytes}
	stderr := &proc.Tail{N: 16 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) && exit.ExitCode() == 3:
		return nil, &ImportError{Module: missingModule(string(stderr.Bytes()))}
	case errors.As(err, &exit) && exit.ExitCode() == 4:
		return nil, &ImportError{Detail: strings.TrimSpace(string(stderr.Bytes()))}
	case ctx.Err() != nil:
		return nil, fmt.Errorf("the exporter (%s) did not finish within %s: %w", python, timeout, ctx.Err())
	case err != nil:
		return nil, fmt.Errorf("the exporter (%s): %w: %s", python, err, strings.TrimSpace(string(stderr.Bytes())))
	case stdout.Over():
		return nil, fmt.Errorf("the exporter printed more than %d MiB", maxExportBytes>>20)
	}
	return Decode(stdout.Bytes())
}

// exporterEnv is env with SGLang's python/ first on PYTHONPATH, no bytecode written, no GPU
// visible and the Hugging Face libraries offline.
func exporterEnv(env []string, pyDir string) []string {
	out := make([]string, 0, len(env)+6)
	path := pyDir
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "PYTHONPATH":
			if v != "" {
				path += string(os.PathListSeparator) + v
			}
			continue
		case "PYTHONDONTWRITEBYTECODE", "CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE":
			continue
		}
		out = append(out, kv)
	}
	return append(out, "PYTHONPATH="+path, "PYTHONDONTWRITEBYTECODE=1", "CUDA_VISIBLE_DEVICES=", "HIP_VISIBLE_DEVICES=",
		"HF_HUB_OFFLINE=1", "TRANSFORMERS_OFFLINE=1")
}

// missingModule is the module the exporter named ("missing module: NAME").
func missingModule(stderr string) string {
	for line := range strings.Lines(stderr) {
		if m, ok := strings.CutPrefix(strings.TrimSpace(line), "missing module: "); ok {
			return m
		}
	}
	return "?"
}

// Commit is the commit SGLang's checkout is at (git rev-parse HEAD), "" when it is no git
// checkout or git is missing: the suite then says that the commit is unknown.
func Commit(ctx context.Context, root string) string {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := proc.Command(ctx, time.Second, "git", "-C", root, "rev-parse", "--verify", "HEAD^{commit}").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
