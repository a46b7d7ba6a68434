package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/diffusion-check/diffusion-check/internal/gh"
	"github.com/diffusion-check/diffusion-check/suite"
)

// suiteLines is the suite file of --suite as check run annotations name it (relative to the
// repository's root, in slashes) and the line of each of its cases; "" and nil without
// --suite, or when the suite cannot be read (told on stderr: annotations are not worth
// failing the report for).
func suiteLines(e env, ge gh.Env, path string) (string, map[string]int) {
	if path == "" {
		return "", nil
	}
	s, err := suite.Load(path)
	if err != nil {
		fmt.Fprintf(e.stderr, "report: the suite's case lines are not known (no check run annotations, no JUnit file and line): %v\n", err)
		return "", nil
	}
	rel, err := repoPath(ge, path)
	if err != nil {
		fmt.Fprintf(e.stderr, "report: the suite's case lines are not known (no check run annotations, no JUnit file and line): %v\n", err)
		return "", nil
	}
	lines := map[string]int{}
	for _, c := range s.Cases {
		lines[c.ID] = c.Line
	}
	return rel, lines
}

// repoPath is path relative to the repository's root (GITHUB_WORKSPACE, else the working
// folder), as GitHub names a file in an annotation.
func repoPath(ge gh.Env, path string) (string, error) {
	root := ge.Workspace
	if root == "" {
		var err error
		if root, err = os.Getwd(); err != nil {
			return "", err
		}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is outside the repository %s", path, root)
	}
	return filepath.ToSlash(rel), nil
}
