package report

import "github.com/diffusion-check/diffusion-check/results"

// maxCheckSummary is GitHub's limit on a check run's output summary, in characters; the
// summary is kept below it in bytes, which are never fewer than characters.
const maxCheckSummary = 65535

// CheckRun is what a lane's check run shows on the Checks tab: its name, its conclusion,
// a title (the lane's commit status, in words), the summary (the lane's report, as the
// comment renders it) and annotations on the suite file's case lines.
type CheckRun struct {
	Name, Conclusion, Title, Summary string
	Annotations                      []FileAnnotation
}

// FileAnnotation marks a line of a file of the repository: Level is failure or warning.
type FileAnnotation struct {
	Path           string
	Line           int
	Level          string
	Title, Message string
}

// checkRunName is the name of a lane's check run: "diffusion-check / base".
func checkRunName(lane string) string { return "diffusion-check / " + lane }

// LaneCheckRun renders lane l of r as its check run. suitePath is the suite file the lane
// ran, relative to the repository's root, and lines the line of each case in it (by case
// id): a request or case that did not pass is annotated on its case's line, a flaky one
// with a warning; what maps to no case (a lane's error), or a case of no known line, gets
// no annotation. Without a suite path there are none.
func LaneCheckRun(r *Report, l results.Result, suitePath string, lines map[string]int) CheckRun {
	st := LaneStatus(l, r.RunURL)
	run := CheckRun{Name: checkRunName(l.Lane), Title: st.Description, Conclusion: "failure"}
	switch {
	case st.State == "success":
		run.Conclusion = "success"
	case l.Status == results.Skip:
		run.Conclusion = "skipped"
	}
	one := *r
	one.Lanes, one.Pending, one.Previous, one.Others = []results.Result{l}, nil, nil, nil
	run.Summary = markdown(&one, maxCheckSummary, fullInSummary(r.FullURL), checkRunCaseRequests)
	if suitePath == "" {
		return run
	}
	errs, warns := annotations([]results.Result{l})
	for _, a := range append(errs, warns...) {
		line := lines[a.Case]
		if a.Case == "" || line < 1 {
			continue
		}
		level := "failure"
		if a.Warning {
			level = "warning"
		}
		run.Annotations = append(run.Annotations, FileAnnotation{Path: suitePath, Line: line, Level: level, Title: a.Title, Message: a.Message})
	}
	return run
}
