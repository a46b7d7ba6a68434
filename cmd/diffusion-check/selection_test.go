package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestActionArgsSelect(t *testing.T) {
	for _, tc := range []struct {
		command string
		inputs  map[string]string
		want    []string
		err     string
	}{
		{"plan", map[string]string{"suite": "s.yaml", "partitions": "2", "select": "auto"}, []string{"--suite=s.yaml", "--partitions=2", "--changed-in-pr"}, ""},
		{"plan", map[string]string{"suite": "s.yaml", "partitions": "2", "select": "all"}, []string{"--suite=s.yaml", "--partitions=2"}, ""},
		{"plan", map[string]string{"suite": "s.yaml", "select": "some"}, nil, `input select: want all or auto, got "some"`},
		{"run", map[string]string{"suite": "s.yaml", "select": "auto"}, nil, "give this run step the plan step's plan file"},
		{"run", map[string]string{"suite": "s.yaml", "select": "auto", "plan": "p.json"}, []string{"--suite=s.yaml", "--plan=p.json"}, ""},
	} {
		got, err := actionArgs(tc.command, func(k string) string { return tc.inputs[k] })
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s %v: err = %v, want %q", tc.command, tc.inputs, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s %v (-want +got):\n%s", tc.command, tc.inputs, diff)
		}
	}
}
