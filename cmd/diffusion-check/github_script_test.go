package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/diffusion-check/diffusion-check/internal/githubfake"
	"github.com/diffusion-check/diffusion-check/internal/pictures"
)

// scriptHead is the PR head commit of the event that `github start` writes.
const scriptHead = "0123456789abcdef0123456789abcdef01234567"

// fakes holds the fake GitHub of each running script.
var fakes sync.Map // *testscript.TestScript → *githubfake.Fake

// eventHead is the head commit of the workflow's event (event.json): the pull request's, or
// the workflow run's.
func eventHead(ts *testscript.TestScript) string {
	b, err := os.ReadFile(ts.MkAbs("event.json"))
	ts.Check(err)
	var ev struct {
		PullRequest struct {
			Head struct {
				SHA string `json:"sha"`
			} `json:"head"`
		} `json:"pull_request"`
		WorkflowRun struct {
			HeadSHA string `json:"head_sha"`
		} `json:"workflow_run"`
	}
	ts.Check(json.Unmarshal(b, &ev))
	if ev.PullRequest.Head.SHA != "" {
		return ev.PullRequest.Head.SHA
	}
	return ev.WorkflowRun.HeadSHA
}

// cmdGitHub drives a fake GitHub for a script:
//
//	github start [readonly] [pagesize=N] [workflow_run[=fork]] [fork] [actor=LOGIN:ID]
//	                                          start it; set GITHUB_* and write $WORK/event.json (PR 7,
//	                                          or a workflow_run payload about it: a fork's, from its
//	                                          branch main, lists no PR;
//	                                          fork: PR 7 comes from mallory/diffusion); the token is the
//	                                          workflow's GITHUB_TOKEN, or actor's personal token
//	github usercomment PR LOGIN BODY          LOGIN posts BODY (a Go string literal) on PR
//	github pull PR SHA HEADREPO [closed] [branch=B] [base=B] [previous=SHA]
//	                                          the fake knows pull request PR with that head (from
//	                                          branch B of HEADREPO, into base B, earlier heads SHA)
//	github files PR PATH|OLD->NEW|many=N|"GO STRING"...
//	                                          the files pull request PR changes (OLD->NEW: a rename)
//	github seed PR N                          add N comments of other people
//	github fault METHOD PATH CODE [retry-after=S] [times=N]
//	github comments PR N                      PR has N comments with a diffusion-check marker
//	github comment PR REGEXP                  the one diffusion-check comment matches
//	github authored PR LOGIN N [REGEXP]       LOGIN wrote N comments on PR, each matching REGEXP
//	github environment NAME used|reviewers=A,B|wait=MIN...
//	                                          environment NAME: created by a job's first use (no
//	                                          rules), or set up with those required reviewers
//	github status CONTEXT STATE [REGEXP]      the last status of CONTEXT on the head commit
//	github requests N                         it served N requests
//	github statuses N                         it holds N commit statuses, on any commit
//	github checkruns N                        it holds N check runs
//	github checkrun NAME CONCLUSION [annotations=PATH:LINE,...] [REGEXP...]
//	                                          the check run NAME has that conclusion, annotations at
//	                                          those lines, and a summary matching each REGEXP; the
//	                                          summary goes to $WORK/checkrun.md
//	github branch NAME N                      branch NAME holds N pictures (files under runs/)
//	github nobranch NAME                      there is no branch NAME
//	github png FILE                           write a failure picture (1500 px wide) to FILE
//	(start options: nochecks refuses check runs, nocontents refuses git writes, with 403)
//
// The fake's problems (unexpected calls, bad bodies) fail the script when it ends.
func cmdGitHub(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: github start|seed|fault|comments|comment|status|requests ...")
	}
	if args[0] == "start" {
		cfg := githubfake.Config{Owner: "octo", Repo: "diffusion", Token: "ghs_script_token"}
		ev := fmt.Sprintf(
			`{"number": 7, "pull_request": {"number": 7, "head": {"sha": %q}, "merge_commit_sha": "ffffffffffffffffffffffffffffffffffffffff"}, `+
				`"repository": {"full_name": "octo/diffusion"}}`,
			scriptHead,
		)
		eventName := "pull_request"
		for _, a := range args[1:] {
			if strings.HasPrefix(a, "workflow_run") {
				eventName = "workflow_run"
			}
			switch {
			case a == "fork":
				ev = fmt.Sprintf(
					`{"number": 7, "pull_request": {"number": 7, "head": {"sha": %q, "repo": {"full_name": "mallory/diffusion"}}, `+
						`"merge_commit_sha": "ffffffffffffffffffffffffffffffffffffffff"}, "repository": {"full_name": "octo/diffusion"}}`,
					scriptHead,
				)
			case strings.HasPrefix(a, "actor="):
				login, id, ok := strings.Cut(strings.TrimPrefix(a, "actor="), ":")
				if !ok {
					ts.Fatalf("github start: actor=LOGIN:ID, got %q", a)
				}
				cfg.Actor = &githubfake.User{Login: login, ID: int64(atoi(ts, id))}
			case a == "workflow_run":
				ev = fmt.Sprintf(
					`{"action": "completed", "workflow_run": {"event": "pull_request", "head_sha": %q, "head_repository": {"full_name": "octo/diffusion"}, `+
						`"pull_requests": [{"number": 7, "head": {"sha": %q}}]}, "repository": {"full_name": "octo/diffusion"}}`,
					scriptHead,
					scriptHead,
				)
			case a == "workflow_run=fork":
				ev = fmt.Sprintf(
					`{"action": "completed", "workflow_run": {"event": "pull_request", "head_sha": %q, "head_branch": "main", `+
						`"head_repository": {"full_name": "mallory/diffusion"}, "pull_requests": []}, "repository": {"full_name": "octo/diffusion"}}`,
					scriptHead,
				)
			case a == "readonly":
				cfg.ReadOnly = true
			case a == "nochecks":
				cfg.NoChecks = true
			case a == "nocontents":
				cfg.NoContents = true
			case strings.HasPrefix(a, "pagesize="):
				cfg.PageSize = atoi(ts, strings.TrimPrefix(a, "pagesize="))
			default:
				ts.Fatalf("github start: unknown option %q", a)
			}
		}
		f := githubfake.New(cfg)
		fakes.Store(ts, f)
		if eventName == "pull_request" || strings.Contains(ev, `"pull_requests": [{"number": 7`) {
			// The event's pull request, its head the event's commit (a fork's from its own
			// repository): publishing reads it before it writes the comment.
			var pr struct {
				PullRequest struct {
					Head struct {
						Repo struct {
							FullName string `json:"full_name"`
						} `json:"repo"`
					} `json:"head"`
				} `json:"pull_request"`
			}
			ts.Check(json.Unmarshal([]byte(ev), &pr))
			f.AddPull(githubfake.Pull{Number: 7, HeadSHA: scriptHead, HeadRepo: pr.PullRequest.Head.Repo.FullName})
		}
		ts.Defer(func() {
			f.Close()
			fakes.Delete(ts)
			ps := f.Problems()
			for _, x := range f.Unused() {
				ps = append(ps, fmt.Sprintf("the fault %s was never used: no request matched it", x))
			}
			if len(ps) > 0 {
				ts.Fatalf("fake GitHub:\n%s", strings.Join(ps, "\n"))
			}
		})
		for k, v := range map[string]string{
			"GITHUB_API_URL": f.URL() + "/api/v3", "GITHUB_TOKEN": cfg.Token, "GITHUB_REPOSITORY": "octo/diffusion",
			"GITHUB_SERVER_URL": "https://github.com", "GITHUB_RUN_ID": "4242", "GITHUB_RUN_NUMBER": "17",
			"GITHUB_EVENT_PATH": ts.MkAbs("event.json"), "GITHUB_STEP_SUMMARY": ts.MkAbs("summary.md"),
			// As in a pull_request workflow: GITHUB_SHA is the merge commit, not the head.
			"GITHUB_EVENT_NAME": eventName, "GITHUB_SHA": "ffffffffffffffffffffffffffffffffffffffff",
			// The fake takes writes as fast as they come (the spacing is TestWritesAreSpaced's).
			"DIFFUSION_CHECK_WRITE_SPACING": "0s",
		} {
			ts.Setenv(k, v)
		}
		ts.Check(os.WriteFile(ts.MkAbs("event.json"), []byte(ev), 0o644))
		return
	}
	if args[0] == "png" {
		need(ts, args, 2)
		writePicture(ts, ts.MkAbs(args[1]))
		return
	}
	v, ok := fakes.Load(ts)
	if !ok {
		ts.Fatalf("github %s: run github start first", args[0])
	}
	f := v.(*githubfake.Fake)
	switch args[0] {
	case "push":
		// github push SHA: a push moves #7's head to SHA.
		need(ts, args, 2)
		f.Push(7, args[1])
	case "event-head":
		// github event-head SHA: the event of the run of the push whose head was SHA.
		need(ts, args, 2)
		b, err := os.ReadFile(ts.MkAbs("event.json"))
		ts.Check(err)
		var ev map[string]any
		ts.Check(json.Unmarshal(b, &ev))
		ev["pull_request"].(map[string]any)["head"].(map[string]any)["sha"] = args[1]
		b, err = json.Marshal(ev)
		ts.Check(err)
		ts.Check(os.WriteFile(ts.MkAbs("event.json"), b, 0o644))
	case "pull":
		need(ts, args, 4)
		p := githubfake.Pull{Number: atoi(ts, args[1]), HeadSHA: args[2], HeadRepo: args[3]}
		for _, a := range args[4:] {
			k, v, _ := strings.Cut(a, "=")
			switch k {
			case "closed":
				p.State = "closed"
			case "branch":
				p.HeadRef = v
			case "base":
				p.BaseRef = v
			case "previous":
				p.Previous = append(p.Previous, v)
			default:
				ts.Fatalf("github pull: unknown option %q", a)
			}
		}
		f.AddPull(p)
	case "files":
		need(ts, args, 3)
		var files []githubfake.PullFile
		for _, a := range args[2:] {
			switch {
			case strings.HasPrefix(a, "many="):
				for i := range atoi(ts, strings.TrimPrefix(a, "many=")) {
					files = append(files, githubfake.PullFile{Filename: fmt.Sprintf("docs/page%04d.md", i)})
				}
			case strings.Contains(a, "->"):
				from, to, _ := strings.Cut(a, "->")
				files = append(files, githubfake.PullFile{Filename: to, PreviousFilename: from, Status: "renamed"})
			case strings.HasPrefix(a, `"`):
				// A Go string literal, for names with control characters.
				name, err := strconv.Unquote(a)
				ts.Check(err)
				files = append(files, githubfake.PullFile{Filename: name})
			default:
				files = append(files, githubfake.PullFile{Filename: a})
			}
		}
		f.SetPullFiles(atoi(ts, args[1]), files)
	case "usercomment":
		need(ts, args, 4)
		body, err := strconv.Unquote(args[3])
		ts.Check(err)
		f.AddComment(atoi(ts, args[1]), args[2], body)
	case "statuses":
		need(ts, args, 2)
		if got, want := len(f.Statuses()), atoi(ts, args[1]); got != want {
			ts.Fatalf("fake holds %d statuses, want %d: %+v", got, want, f.Statuses())
		}
	case "seed":
		need(ts, args, 3)
		for i := range atoi(ts, args[2]) {
			f.AddComment(atoi(ts, args[1]), "reviewer", fmt.Sprintf("review comment %d", i))
		}
	case "fault":
		if len(args) < 4 {
			ts.Fatalf("usage: github fault METHOD PATH CODE [retry-after=S] [times=N]")
		}
		x := githubfake.Fault{Method: args[1], Path: args[2], Code: atoi(ts, args[3])}
		for _, a := range args[4:] {
			k, val, _ := strings.Cut(a, "=")
			switch k {
			case "retry-after":
				x.RetryAfter = val
			case "times":
				x.Times = atoi(ts, val)
			case "delay":
				d, err := time.ParseDuration(val)
				ts.Check(err)
				x.Delay = d
			default:
				ts.Fatalf("github fault: unknown option %q", a)
			}
		}
		switch {
		case x.Code == 403 && x.RetryAfter != "":
			x.Message = "You have exceeded a secondary rate limit."
		case x.Code == 403:
			x.Message = "Resource not accessible by integration"
		case x.Code == 401:
			x.Message = "Bad credentials"
		case x.Code == 404:
			x.Message = "Not Found"
		}
		f.Inject(x)
	case "comments":
		need(ts, args, 3)
		if got, want := len(ours(f, atoi(ts, args[1]))), atoi(ts, args[2]); got != want {
			ts.Fatalf("PR %s has %d diffusion-check comments, want %d", args[1], got, want)
		}
	case "comment":
		need(ts, args, 3)
		cs := ours(f, atoi(ts, args[1]))
		if len(cs) != 1 {
			ts.Fatalf("PR %s has %d diffusion-check comments, want 1", args[1], len(cs))
		}
		if !regexp.MustCompile(args[2]).MatchString(cs[0].Body) {
			ts.Fatalf("comment does not match %q:\n%s", args[2], cs[0].Body)
		}
		ts.Check(os.WriteFile(filepath.Join(ts.Getenv("WORK"), "comment.md"), []byte(cs[0].Body), 0o644))
	case "environment":
		need(ts, args, 3)
		var e githubfake.Environment
		for _, a := range args[2:] {
			k, v, _ := strings.Cut(a, "=")
			switch k {
			case "used":
				f.UseEnvironment(args[1])
				continue
			case "reviewers":
				e.Reviewers = strings.Split(v, ",")
			case "wait":
				e.WaitTimer = atoi(ts, v)
			default:
				ts.Fatalf("github environment: unknown option %q", a)
			}
			f.SetEnvironment(args[1], e)
		}
	case "authored":
		need(ts, args, 4)
		var bodies []string
		for _, c := range f.Comments(atoi(ts, args[1])) {
			if c.User == args[2] {
				bodies = append(bodies, c.Body)
			}
		}
		if len(bodies) != atoi(ts, args[3]) {
			ts.Fatalf("%s wrote %d comments on PR %s, want %s: %q", args[2], len(bodies), args[1], args[3], bodies)
		}
		for _, b := range bodies {
			if len(args) > 4 && !regexp.MustCompile(args[4]).MatchString(b) {
				ts.Fatalf("a comment of %s does not match %q:\n%s", args[2], args[4], b)
			}
		}
	case "status":
		// github status CONTEXT STATE [DESCRIPTION]: the last status of CONTEXT on the head
		// commit of the current event; none may be on the merge commit.
		need(ts, args, 3)
		head := eventHead(ts)
		var last *githubfake.Status
		for _, s := range f.Statuses() {
			if s.Context != args[1] {
				continue
			}
			if s.SHA == "ffffffffffffffffffffffffffffffffffffffff" {
				ts.Fatalf("status %s set on the merge commit %s, not the PR head", s.Context, s.SHA)
			}
			if s.SHA == head {
				last = &s
			}
		}
		switch {
		case last == nil:
			ts.Fatalf("no status %s; statuses: %+v", args[1], f.Statuses())
		case last.State != args[2]:
			ts.Fatalf("status %s is %s (%q), want %s", args[1], last.State, last.Description, args[2])
		case len(args) > 3 && !regexp.MustCompile(args[3]).MatchString(last.Description):
			ts.Fatalf("status %s description %q does not match %q", args[1], last.Description, args[3])
		case last.TargetURL != "https://github.com/octo/diffusion/actions/runs/4242":
			ts.Fatalf("status %s target URL %q, want the run", args[1], last.TargetURL)
		}
	case "last":
		// github last PR REGEX: the PR's last comment is diffusion-check's and matches REGEX.
		need(ts, args, 3)
		all := f.Comments(atoi(ts, args[1]))
		if len(all) == 0 || !strings.Contains(all[len(all)-1].Body, "<!-- diffusion-check:") || !regexp.MustCompile(args[2]).MatchString(all[len(all)-1].Body) {
			ts.Fatalf("the last comment of PR %s is not diffusion-check's matching %q: %+v", args[1], args[2], all)
		}
	case "checkruns":
		need(ts, args, 2)
		if got, want := len(f.CheckRuns()), atoi(ts, args[1]); got != want {
			ts.Fatalf("fake holds %d check runs, want %d: %+v", got, want, f.CheckRuns())
		}
	case "checkrun":
		need(ts, args, 3)
		checkRun(ts, f, args[1], args[2], args[3:])
	case "branch":
		need(ts, args, 3)
		files, _, ok := f.BranchFiles(args[1])
		n := 0
		for p := range files {
			if strings.HasPrefix(p, "runs/") {
				n++
			}
		}
		if !ok || n != atoi(ts, args[2]) {
			ts.Fatalf("branch %s (exists %v) holds %d pictures, want %s", args[1], ok, n, args[2])
		}
	case "nobranch":
		need(ts, args, 2)
		if _, _, ok := f.BranchFiles(args[1]); ok {
			ts.Fatalf("branch %s exists", args[1])
		}
	case "requests":
		need(ts, args, 2)
		if got, want := len(f.Requests()), atoi(ts, args[1]); got != want {
			ts.Fatalf("fake served %d requests, want %d: %v", got, want, f.Requests())
		}
	default:
		ts.Fatalf("github: unknown subcommand %q", args[0])
	}
}

func ours(f *githubfake.Fake, pr int) []githubfake.Comment {
	var out []githubfake.Comment
	for _, c := range f.Comments(pr) {
		if strings.Contains(c.Body, "<!-- diffusion-check:") {
			out = append(out, c)
		}
	}
	return out
}

func need(ts *testscript.TestScript, args []string, n int) {
	if len(args) < n {
		ts.Fatalf("github %s: want %d arguments", args[0], n-1)
	}
}

func atoi(ts *testscript.TestScript, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		ts.Fatalf("%q is not a number", s)
	}
	return n
}

// checkRun checks the check run called name: its conclusion, and with opts where its
// annotations are (annotations=PATH:LINE,...) and regexps its summary matches.
func checkRun(ts *testscript.TestScript, f *githubfake.Fake, name, conclusion string, opts []string) {
	var run *githubfake.CheckRun
	for _, c := range f.CheckRuns() {
		if c.Name == name {
			run = &c
		}
	}
	if run == nil {
		ts.Fatalf("no check run %q: %+v", name, f.CheckRuns())
	}
	if run.HeadSHA != scriptHead || run.Conclusion != conclusion || run.Status != "completed" {
		ts.Fatalf("check run %s: %s %s on %s, want completed %s on the PR head", name, run.Status, run.Conclusion, run.HeadSHA, conclusion)
	}
	ts.Check(os.WriteFile(filepath.Join(ts.Getenv("WORK"), "checkrun.md"), []byte(run.Summary), 0o644))
	for _, o := range opts {
		if want, ok := strings.CutPrefix(o, "annotations="); ok {
			var got []string
			for _, a := range run.Annotations {
				got = append(got, fmt.Sprintf("%s:%d", a.Path, a.StartLine))
			}
			if strings.Join(got, ",") != want {
				ts.Fatalf("check run %s annotates %v, want %s: %+v", name, got, want, run.Annotations)
			}
			continue
		}
		if !regexp.MustCompile(o).MatchString(run.Summary) {
			ts.Fatalf("check run %s summary does not match %q:\n%s", name, o, run.Summary)
		}
	}
}

// writePicture writes a failure picture as the runner draws one, wider than a comment
// shows, to path.
func writePicture(ts *testscript.TestScript, path string) {
	const w, h = 480, 270
	fr := pictures.Frame{RGB: make([]byte, 3*w*h), W: w, H: h}
	for i := range fr.RGB {
		fr.RGB[i] = byte(i * 7 % 251)
	}
	f := pictures.Failure{Title: "t2i request 1/1: frame 1 of 1", Lines: []pictures.Line{{Text: "consistency.ssim fail: SSIM 0.61 (limit ≥ 0.92)", Bad: true}},
		GT: fr, Out: fr, SSIMMap: make([]float64, (w-6)*(h-6)), MapW: w - 6, MapH: h - 6}
	ts.Check(os.MkdirAll(filepath.Dir(path), 0o755))
	ts.Check(pictures.Write(path, f))
}
