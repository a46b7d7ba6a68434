package main

import (
	"cmp"
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

	"github.com/diffusion-check/diffusion-check/internal/inputfile"
	"github.com/diffusion-check/diffusion-check/internal/sglangcases"
	"github.com/diffusion-check/diffusion-check/internal/words"
)

// sglangSuiteOptions are the flags of sglang-suite.
type sglangSuiteOptions struct {
	root, python, lists, gpu, out, check string
}

func (o *sglangSuiteOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&o.root, "sglang-root", ".", "SGLang's checkout `DIR`; its python/ goes first on PYTHONPATH")
	fs.StringVar(&o.python, "python", "python3", "the `PY` interpreter that imports SGLang's registry (SGLang installed with its dependencies)")
	fs.StringVar(&o.lists, "lists", "", "the `NAMES` of gpu_cases.py's lists to write, comma-separated (default: every list of DiffusionTestCase)")
	fs.StringVar(&o.gpu, "gpu", "", "the suite's gpu `CLASS` (default: none, the run detects it)")
	fs.StringVar(&o.out, "out", "", "write the suite to `FILE` (default: stdout)")
	fs.StringVar(&o.check, "check", "", "write nothing: compare the committed suite `FILE` with what the registry gives now; exit 1 when they differ")
}

// sglangSuiteCmd writes a suite from SGLang's own case registry (internal/sglangcases).
func sglangSuiteCmd(ctx context.Context, e env, args []string) (int, error) {
	var o sglangSuiteOptions
	fs := newFlags("sglang-suite", e)
	o.register(fs)
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	switch {
	case fs.NArg() > 0:
		return 0, usagef("unexpected arguments %q", fs.Args())
	case o.out != "" && o.check != "":
		return 0, usagef("give --out (write the suite) or --check (compare a committed one), not both")
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
	if file := cmp.Or(o.check, o.out); err == nil && file != "" {
		suiteDir, err = filepath.Abs(filepath.Dir(file))
	}
	if err != nil {
		return 0, err
	}
	text, sum, err := sglangcases.Write(reg, sglangcases.WriteOptions{SuiteDir: suiteDir, Root: o.root, Commit: sglangcases.Commit(ctx, o.root), GPU: o.gpu})
	if err != nil {
		return 0, usageError{err}
	}
	if o.check != "" {
		return checkSGLangSuite(ctx, e, o, text)
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

// maxSuiteBytes bounds the committed suite --check reads.
const maxSuiteBytes = 16 << 20

// checkSGLangSuite compares the committed suite with the one the registry gives now: exit 0
// when they are the same (comments aside, but for which cases are commented out), else the
// differences and exit 1.
func checkSGLangSuite(ctx context.Context, e env, o sglangSuiteOptions, now []byte) (int, error) {
	old, err := inputfile.Read(ctx, o.check, maxSuiteBytes)
	if err != nil {
		return 0, usageError{fmt.Errorf("--check: %w", err)}
	}
	d, err := sglangcases.Compare(o.check, old, now)
	if err != nil {
		return 0, usageError{err}
	}
	if d.Empty() {
		fmt.Fprintf(e.stderr, "sglang-suite: %s is what SGLang's registry gives now\n", o.check)
		return exitOK, nil
	}
	for _, l := range d.Lines() {
		fmt.Fprintf(e.stdout, "%s\n", l)
	}
	return 0, failedError{fmt.Errorf("%s differs from what SGLang's registry gives now; write it again: diffusion-check sglang-suite --sglang-root %s --out %s",
		o.check, o.root, o.check)}
}

// destination says where the suite went, for the summary line.
func destination(out string) string {
	if out == "" {
		return " to stdout"
	}
	return " to " + out
}
