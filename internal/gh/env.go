package gh

import (
	"cmp"
	"fmt"
	"strings"
)

// Env is what a GitHub Actions step tells a program about its run, read once (ReadEnv) and
// passed to every GitHub path, as reviewdog's cienv does.
// https://docs.github.com/actions/reference/workflows-and-actions/variables#default-environment-variables
type Env struct {
	// Actions is GITHUB_ACTIONS=true: the program runs in a workflow step.
	Actions bool
	// Repository is GITHUB_REPOSITORY, owner/name.
	Repository string
	// EventName and EventPath are GITHUB_EVENT_NAME and GITHUB_EVENT_PATH: the workflow's
	// own event, which GitHub wrote and which alone is trusted to say where to publish.
	EventName, EventPath string
	// RunID, RunNumber and RunAttempt are GITHUB_RUN_ID, GITHUB_RUN_NUMBER and
	// GITHUB_RUN_ATTEMPT (a re-run's attempt is 2, 3, …).
	RunID, RunNumber, RunAttempt string
	// ServerURL is GITHUB_SERVER_URL (default https://github.com); APIURL is GITHUB_API_URL
	// (https://api.github.com, or a GHES server's https://HOST/api/v3).
	ServerURL, APIURL string
	// Token is GITHUB_TOKEN (the action's github_token input).
	Token string
	// SHA and Ref are GITHUB_SHA and GITHUB_REF: for a pull request, its merge commit.
	SHA, Ref string
	// Workspace is GITHUB_WORKSPACE, StepSummary GITHUB_STEP_SUMMARY and Output
	// GITHUB_OUTPUT (the step outputs' file, which the toolkit writes).
	Workspace, StepSummary, Output string
}

// ReadEnv reads the environment through getenv (os.Getenv in cmd; a map in tests).
func ReadEnv(getenv func(string) string) Env {
	return Env{
		Actions:     getenv("GITHUB_ACTIONS") == "true",
		Repository:  getenv("GITHUB_REPOSITORY"),
		EventName:   getenv("GITHUB_EVENT_NAME"),
		EventPath:   getenv("GITHUB_EVENT_PATH"),
		RunID:       getenv("GITHUB_RUN_ID"),
		RunNumber:   getenv("GITHUB_RUN_NUMBER"),
		RunAttempt:  getenv("GITHUB_RUN_ATTEMPT"),
		ServerURL:   strings.TrimRight(cmp.Or(getenv("GITHUB_SERVER_URL"), "https://github.com"), "/"),
		APIURL:      getenv("GITHUB_API_URL"),
		Token:       getenv("GITHUB_TOKEN"),
		SHA:         getenv("GITHUB_SHA"),
		Ref:         getenv("GITHUB_REF"),
		Workspace:   getenv("GITHUB_WORKSPACE"),
		StepSummary: getenv("GITHUB_STEP_SUMMARY"),
		Output:      getenv("GITHUB_OUTPUT"),
	}
}

// OwnerRepo splits Repository into its owner and name.
func (e Env) OwnerRepo() (owner, name string, err error) {
	owner, name, ok := strings.Cut(e.Repository, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("GITHUB_REPOSITORY: want OWNER/NAME, got %q", e.Repository)
	}
	return owner, name, nil
}

// RunURL is the page of the workflow run ("" outside a run); the run's artifacts are listed
// under its #artifacts anchor.
func (e Env) RunURL() string {
	if e.RunID == "" || e.Repository == "" {
		return ""
	}
	return fmt.Sprintf("%s/%s/actions/runs/%s", e.ServerURL, e.Repository, e.RunID)
}

// RunLabel names the run for a link: "run #12" (its number), else "run ID".
func (e Env) RunLabel() string {
	switch {
	case e.RunNumber != "":
		return "run #" + e.RunNumber
	case e.RunID != "":
		return "run " + e.RunID
	}
	return ""
}

// Missing names the variables of names ("GITHUB_TOKEN", "GITHUB_REPOSITORY",
// "GITHUB_EVENT_PATH") that are empty.
func (e Env) Missing(names ...string) []string {
	val := map[string]string{"GITHUB_TOKEN": e.Token, "GITHUB_REPOSITORY": e.Repository, "GITHUB_EVENT_PATH": e.EventPath, "GITHUB_EVENT_NAME": e.EventName}
	var out []string
	for _, n := range names {
		if v, ok := val[n]; !ok || v == "" {
			out = append(out, n)
		}
	}
	return out
}
