package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/diffusion-check/diffusion-check/internal/sglangcases"
	"github.com/diffusion-check/diffusion-check/internal/words"
)

// sglangSuiteOptions are the flags of sglang-suite.
type sglangSuiteOptions struct {
	root, python, lists, gpu, out string
}

func (o *sglangSuiteOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&o.root, "sglang-root", ".", "SGLang's checkout `DIR`; its python/ goes first on PYTHONPATH")
	fs.StringVar(&o.python, "python", "python3", "the `PY` interpreter that imports SGLang's registry (SGLang installed with its dependencies)")
	fs.StringVar(&o.lists, "lists", "", "the `NAME,...` of gpu_cases.py's lists to write (default: every list of DiffusionTestCase)")
	fs.StringVar(&o.gpu, "gpu", "", "the suite's gpu `CLASS` (default: none, the run detects it)")
	fs.StringVar(&o.out, "out", "", "write the suite to `FILE` (default: stdout)")
}

// sglangSuiteCmd writes a suite from SGLang's own case registry (internal/sglangcases).
func sglangSuiteCmd(ctx context.Context, e env, args []string) (int, error) {
	var o sglangSuiteOptions
	fs := newFlags("sglang-suite", e)
	o.register(fs)
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	if fs.NArg() > 0 {
		return 0, usagef("unexpected arguments %q", fs.Args())
	}
	var lists []string
	for _, l := range strings.Split(o.lists, ",") {
		if l = strings.TrimSpace(l); l != "" && !slices.Contains(lists, l) {
			lists = append(lists, l)
		}
	}
	reg, err := sglangcases.Export(ctx, sglangcases.ExportOptions{Root: o.root, Python: o.python, Lists: lists, Environ: e.environ()})
	var ie *sglangcases.ImportError
	switch {
	case errors.As(err, &ie), errors.Is(err, exec.ErrNotFound), errors.Is(err, sglangcases.ErrNoCheckout),
		errors.Is(err, sglangcases.ErrUnknownField):
		return 0, usageError{err}
	case err != nil:
		return 0, err
	}
	suiteDir, err := os.Getwd()
	if err == nil && o.out != "" {
		suiteDir, err = filepath.Abs(filepath.Dir(o.out))
	}
	if err != nil {
		return 0, err
	}
	text, sum, err := sglangcases.Write(reg, sglangcases.WriteOptions{SuiteDir: suiteDir, Root: o.root, Commit: sglangcases.Commit(ctx, o.root), GPU: o.gpu})
	if err != nil {
		return 0, usageError{err}
	}
	if o.out == "" {
		if _, err := e.stdout.Write(text); err != nil {
			return 0, err
		}
	} else if err := os.WriteFile(o.out, text, 0o644); err != nil {
		return 0, err
	}
	fmt.Fprintf(e.stderr, "sglang-suite: %s on %s written%s\n", words.Plural(sum.Cases, "case"), words.Plural(sum.Servers, "server"), destination(o.out))
	if len(sum.Commented) > 0 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(sum.Commented)) {
			parts = append(parts, fmt.Sprintf("%d %s", sum.Commented[k], k))
		}
		fmt.Fprintf(e.stderr, "sglang-suite: written commented out, with the reason, as diffusion-check cannot drive them yet: %s\n", strings.Join(parts, ", "))
	}
	return exitOK, nil
}

// destination says where the suite went, for the summary line.
func destination(out string) string {
	if out == "" {
		return " to stdout"
	}
	return " to " + out
}
