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

// TestActionArgsReport: the report inputs that are plain flags reach report as its own flags
// (job_summary false turns the summary off; true leaves report's default, on in Actions).
func TestActionArgsReport(t *testing.T) {
	in := map[string]string{"results": "r", "retry_budget": "90s", "history": "hist", "history_url": "https://o.github.io/h/",
		"job_summary": "false", "comment_mode": "recreate"}
	got, err := actionArgs("report", func(k string) string { return in[k] })
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"--comment=recreate", "--retry-budget=90s", "--history=hist", "--history-url=https://o.github.io/h/", "--summary=false",
		"--pictures-branch=", "--markdown=diffusion-check-report.md", "--", "r"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("report inputs (-want +got):\n%s", diff)
	}
	in["job_summary"] = "true"
	if got, _ := actionArgs("report", func(k string) string { return in[k] }); strings.Contains(strings.Join(got, " "), "--summary") {
		t.Errorf("job_summary true: %v, want report's default", got)
	}
	in["job_summary"] = "yes"
	_, err = actionArgs("report", func(k string) string { return in[k] })
	if err == nil || !strings.Contains(err.Error(), `input job_summary: want true or false, got "yes"`) {
		t.Errorf("job_summary yes: %v", err)
	}
}
