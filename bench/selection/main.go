package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/diffusion-check/diffusion-check/plan"
	"github.com/diffusion-check/diffusion-check/selection"
	"github.com/diffusion-check/diffusion-check/suite"
)

func main() {
	if err := run(os.Args[1:], os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "selection:", err)
		os.Exit(1)
	}
}

type pull struct {
	PR    int      `json:"pr"`
	Files []string `json:"files"`
}

func run(args []string, getenv func(string) string) error {
	if len(args) < 3 {
		return errors.New("usage: go run ./bench/selection STREAM.jsonl TREE SUITE.yaml [SUITE.yaml...]")
	}
	at := getenv("AT")
	if at == "" {
		at = "python/sglang/multimodal_gen/test/server"
	}
	prefix := getenv("PREFIX")
	if prefix == "" {
		prefix = "python/sglang/multimodal_gen/"
	}
	prs, err := readStream(args[0])
	if err != nil {
		return err
	}
	tree, err := filepath.Abs(args[1])
	if err != nil {
		return err
	}
	for _, path := range args[2:] {
		if err := measure(path, tree, at, prefix, prs); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return nil
}

func readStream(path string) ([]pull, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close() //nolint:errcheck // opened read-only: nothing written to lose
	var prs []pull
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var p pull
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		prs = append(prs, p)
	}
	return prs, sc.Err()
}

// scratch makes a repository root: a copy of the top folder of at (python/, the source
// tree the import graph is read from; package pyimport follows no symbolic links), links to
// tree's other top-level entries, and the suite's folder copied to at in place of the tree's.
func scratch(tree, suiteDir, at string) (string, error) {
	root, err := os.MkdirTemp("", "selection-bench-")
	if err != nil {
		return "", err
	}
	entries, err := os.ReadDir(tree)
	if err != nil {
		return "", err
	}
	top := strings.Split(at, "/")[0]
	for _, e := range entries {
		if e.Name() == top || e.Name() == ".git" {
			continue
		}
		if err := os.Symlink(filepath.Join(tree, e.Name()), filepath.Join(root, e.Name())); err != nil {
			return "", err
		}
	}
	if err := copyDir(filepath.Join(tree, top), filepath.Join(root, top)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	dst := filepath.Join(root, filepath.FromSlash(at))
	if err := os.RemoveAll(dst); err != nil {
		return "", err
	}
	return root, copyDir(suiteDir, dst)
}

func copyDir(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(out, 0o755)
		case !d.Type().IsRegular():
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, data, 0o644)
	})
}

type tally struct {
	n, none, every int
	spent          float64
}

func (t *tally) add(selected, of int, minutes float64) {
	t.n++
	switch selected {
	case 0:
		t.none++
	case of:
		t.every++
	}
	t.spent += minutes
}

func (t tally) String(full float64) string {
	saved := 0.0
	if t.n > 0 && full > 0 {
		saved = 100 * (1 - t.spent/(full*float64(t.n)))
	}
	return fmt.Sprintf("select none %4d, some %4d, all %4d; GPU-min %8.0f of %8.0f, saved %5.1f%%",
		t.none, t.n-t.none-t.every, t.every, t.spent, full*float64(t.n), saved)
}

// withoutImports is s with no server's imports: selection by `paths:` globs alone; and
// whether any server of s had imports.
func withoutImports(s *suite.Suite) (*suite.Suite, bool) {
	globsOnly := *s
	globsOnly.Servers = map[string]*suite.Server{}
	hasImports := false
	for name, srv := range s.Servers {
		c := *srv
		hasImports = hasImports || c.Imports != nil
		c.Imports = nil
		globsOnly.Servers[name] = &c
	}
	return &globsOnly, hasImports
}

// gpuMinutes are the GPU minutes of each case of s as its plan estimates them (one server
// start included, times its GPUs), their sum, and how many plan items there are.
func gpuMinutes(s *suite.Suite) (minutes map[string]float64, full float64, items int, err error) {
	p, err := plan.ForSuite(s, "", s.GPU, 1)
	if err != nil {
		return nil, 0, 0, err
	}
	minutes = map[string]float64{}
	for _, it := range p.Items {
		m := (it.RunS + it.StartS) * float64(max(it.GPUs, 1)) / 60
		minutes[it.Case] += m
		full += m
	}
	return minutes, full, len(p.Items), nil
}

func measure(path, tree, at, prefix string, prs []pull) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	root, err := scratch(tree, filepath.Dir(abs), at)
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	s, err := suite.Load(filepath.Join(root, filepath.FromSlash(at), filepath.Base(path)))
	if err != nil {
		return err
	}
	globsOnly, hasImports := withoutImports(s)
	minutes, full, cases, err := gpuMinutes(s)
	if err != nil {
		return err
	}
	graphs := selection.NewGraphs()
	var imp, glob, impIn, globIn tally
	var reach []string            // pull requests outside prefix that select a case by the import graph
	var graphOnly, globsOnlyN int // pull requests whose selections differ, by which side selects more
	for _, pr := range prs {
		inPrefix := slices.ContainsFunc(pr.Files, func(f string) bool { return strings.HasPrefix(f, prefix) })
		var picked [2]int
		for i, side := range []struct {
			s      *suite.Suite
			all    *tally
			within *tally
		}{{s, &imp, &impIn}, {globsOnly, &glob, &globIn}} {
			out, err := selection.Select(selection.Input{Suite: side.s, Root: root, Changed: pr.Files, Graphs: graphs})
			if err != nil {
				return fmt.Errorf("pull request %d: %w", pr.PR, err)
			}
			var spent float64
			for _, p := range out.Selected {
				spent += minutes[p.Case]
			}
			picked[i] = len(out.Selected)
			of := len(out.Selected) + len(out.Deselected)
			side.all.add(len(out.Selected), of, spent)
			if inPrefix {
				side.within.add(len(out.Selected), of, spent)
			}
			if side.s == s && !inPrefix && hasImports {
				for _, p := range out.Selected {
					if strings.Contains(p.Reason, " is imported by server ") {
						reach = append(reach, fmt.Sprintf("#%d %s", pr.PR, p.Reason))
						break
					}
				}
			}
		}
		switch {
		case picked[0] > picked[1]:
			graphOnly++
		case picked[0] < picked[1]:
			globsOnlyN++
		}
	}
	name := filepath.Base(path)
	fmt.Printf("%s: %d cases, %.0f GPU-min for every case\n", name, cases, full)
	fmt.Printf("  pull requests touching %s (%d):\n    import graph: %s\n    globs:        %s\n", prefix, impIn.n, impIn.String(full), globIn.String(full))
	fmt.Printf("  all pull requests (%d):\n    import graph: %s\n    globs:        %s\n", imp.n, imp.String(full), glob.String(full))
	fmt.Printf("  pull requests where the import graph selects more cases than the globs: %d; fewer: %d\n", graphOnly, globsOnlyN)
	if hasImports {
		fmt.Printf("  pull requests outside %s that change a module a server imports: %d\n", prefix, len(reach))
		for _, r := range reach {
			fmt.Println("    " + r)
		}
	}
	return nil
}
