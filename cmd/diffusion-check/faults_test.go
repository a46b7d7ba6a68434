package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/internal/fault"
)

// TestServeHelpParserAndDocsListTheSameFaults: the faults `serve -h` lists, the ones the fault
// parser accepts (fault.Known, made from the table the parser reads; TestKnownMatchesSet
// parses each) and the rows of the fault table of
// docs/reference-server.md are the same specs in the same order, so that none of the three can
// gain or lose a fault alone.
func TestServeHelpParserAndDocsListTheSameFaults(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(t.Context(), []string{"serve", "-h"}, func(string) string { return "" }, &stdout, &stderr); code != exitOK {
		t.Fatalf("serve -h: exit %d: %s", code, stderr.String())
	}
	m := regexp.MustCompile(`(?m)^  --fault SPEC\n +inject a fault SPEC \(repeatable\): (.+)$`).FindStringSubmatch(stdout.String())
	if m == nil {
		t.Fatalf("serve -h has no --fault SPEC line listing the faults:\n%s", stdout.String())
	}
	help := strings.Split(m[1], ", ")

	_, table, ok := strings.Cut(readRepoFile(t, "docs/reference-server.md"), "\n## Faults\n")
	if !ok {
		t.Fatal("docs/reference-server.md has no ## Faults section")
	}
	table, _, _ = strings.Cut(table, "\n## ")
	var documented []string
	for _, row := range regexp.MustCompile("(?m)^\\| `([^`]+)` \\|").FindAllStringSubmatch(table, -1) {
		documented = append(documented, row[1])
	}

	known := fault.Known()
	if diff := cmp.Diff(known, help); diff != "" {
		t.Errorf("serve -h (-parser +help):\n%s", diff)
	}
	if diff := cmp.Diff(known, documented); diff != "" {
		t.Errorf("fault table of docs/reference-server.md (-parser +documented):\n%s", diff)
	}
}
