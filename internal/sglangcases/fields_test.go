package sglangcases

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The field table of docs/sglang-compat.md names every field of SGLang's three case
// dataclasses that the decoder knows, and no other: a field added to the decoder needs its row,
// and a row needs its field.
func TestFieldTableCoversEveryField(t *testing.T) {
	b, err := os.ReadFile("../../docs/sglang-compat.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "### Every field of SGLang's case dataclasses")
	if start < 0 {
		t.Fatal("docs/sglang-compat.md has no field table")
	}
	table := doc[start:]
	if end := strings.Index(table[4:], "\n#"); end >= 0 {
		table = table[:end+4]
	}
	name := regexp.MustCompile("`([A-Za-z0-9_.]+)`")
	documented := map[string]bool{}
	for line := range strings.Lines(table) {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cell := strings.Split(line, "|")[1]
		class := ""
		for _, m := range name.FindAllStringSubmatch(cell, -1) {
			c, f, ok := strings.Cut(m[1], ".")
			if ok {
				class = c
			} else {
				f = c
			}
			documented[class+"."+f] = true
		}
	}
	var known []string
	for _, c := range dataclasses {
		for _, f := range knownFields(c.name) {
			known = append(known, c.name+"."+f)
			if !documented[c.name+"."+f] {
				t.Errorf("%s.%s has no row in the field table", c.name, f)
			}
		}
	}
	for f := range documented {
		if !slices.Contains(known, f) {
			t.Errorf("the field table names %s, which the decoder does not know", f)
		}
	}
}
