package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/words"
	"github.com/diffusion-check/diffusion-check/results"
)

// JUnit writes the lanes as JUnit XML: a test suite per lane, a test case per request (named
// "case request i/N", class = lane.case) with a property per check, and one per case that ran
// no request. A request that failed has a <failure> listing its checks that did not pass;
// one that errored or was cancelled an <error>; a skipped one <skipped>. Known failures pass
// and are named in system-out; so do flaky ones (failures that confirmation requests did not
// reproduce), which also get a "flaky" property, as rerun-aware tools count them. A case that
// test-impact selection left out is one skipped test case, the reason in its message.
//
// With the suite's file (its path in the repository, as annotations name files) and each
// case's line in it, every test case carries file and line, which test-report actions
// (mikepenz/action-junit-report, dorny/test-reporter, EnricoMi's) annotate from.
func JUnit(w io.Writer, lanes []results.Result, suiteFile string, lines map[string]int) error {
	doc := junitSuites{Name: "diffusion-check"}
	at := func(tc junitCase, id string) junitCase {
		if suiteFile != "" {
			tc.File, tc.Line = suiteFile, lines[id]
		}
		return tc
	}
	for _, l := range lanes {
		s := junitSuite{Name: l.Lane, Timestamp: timestamp(l)}
		for _, c := range l.Cases {
			class := l.Lane + "." + c.ID
			if len(c.Requests) == 0 {
				tc := at(junitCase{Name: c.ID, Class: class, Time: seconds(c.WallMs)}, c.ID)
				outcome(&tc, c.Status, c.Checks, c.Errors)
				s.add(tc)
				continue
			}
			for _, rr := range c.Requests {
				tc := at(junitCase{Name: fmt.Sprintf("%s request %d/%d", c.ID, rr.Index, rr.Of), Class: class, Time: seconds(rr.E2EMs)}, c.ID)
				cs := rr.Checks
				if rr.Index == 1 { // the case-level checks (server start) belong to its first request
					cs = append(append([]results.Check{}, c.Checks...), cs...)
				}
				for _, ck := range cs {
					tc.Props = append(tc.Props, junitProp{Name: propName(ck), Value: propValue(ck)})
				}
				var errs []string
				if rr.Index == 1 {
					errs = c.Errors
				}
				outcome(&tc, rr.Status, cs, errs)
				s.add(tc)
			}
		}
		// Cases that test-impact selection left out are skipped test cases, with the reason,
		// so that test-report tools list them instead of losing them.
		for _, d := range l.Deselected {
			s.add(at(junitCase{Name: d.Case, Class: l.Lane + "." + d.Case, Time: seconds(0),
				Skipped: &junitProblem{Message: "deselected: " + d.Reason, Type: "deselected"}}, d.Case))
		}
		doc.Suites = append(doc.Suites, s)
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		doc.Skipped += s.Skipped
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Timestamp string      `xml:"timestamp,attr,omitempty"`
	Cases     []junitCase `xml:"testcase"`
}

func (s *junitSuite) add(tc junitCase) {
	s.Tests++
	switch {
	case tc.Failure != nil:
		s.Failures++
	case tc.Error != nil:
		s.Errors++
	case tc.Skipped != nil:
		s.Skipped++
	}
	s.Cases = append(s.Cases, tc)
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Class     string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	File      string        `xml:"file,attr,omitempty"`
	Line      int           `xml:"line,attr,omitempty"`
	Props     []junitProp   `xml:"properties>property,omitempty"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitProblem `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProp struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitProblem struct {
	Message string `xml:"message,attr,omitempty"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// outcome sets the failure, error or skipped element of a test case from its status and the
// checks and errors that explain it.
func outcome(tc *junitCase, st results.Status, cs []results.Check, errs []string) {
	var lines, known, flaky []string
	for _, ck := range cs {
		if s := checkLine(ck); s != "" {
			switch ck.Status {
			case results.Known:
				known = append(known, s)
				continue
			case results.Flaky:
				flaky = append(flaky, s)
				continue
			}
			lines = append(lines, s)
		}
	}
	lines = append(lines, errs...)
	var out []string
	if len(known) > 0 {
		out = append(out, "known failures:\n"+strings.Join(known, "\n"))
	}
	if len(flaky) > 0 {
		out = append(out, "flaky (failed, not reproduced by the confirmation requests):\n"+strings.Join(flaky, "\n"))
		tc.Props = append(tc.Props, junitProp{Name: "flaky", Value: strconv.Itoa(len(flaky))})
	}
	tc.SystemOut = strings.Join(out, "\n")
	msg := func() string {
		if len(lines) == 0 {
			return string(st)
		}
		return words.FirstLine(lines[0])
	}
	text := strings.Join(lines, "\n")
	switch st {
	case results.Pass, results.Known, results.Flaky:
	case results.Skip:
		tc.Skipped = &junitProblem{Message: string(st) + because(cs)}
	case results.Fail:
		tc.Failure = &junitProblem{Message: msg(), Type: "fail", Text: text}
	default: // error, cancelled, or a status that is not ours
		if len(lines) == 0 && len(cs) == 0 {
			text = "no checks ran"
		}
		tc.Error = &junitProblem{Message: msg(), Type: string(st), Text: text}
	}
}

// propName is a check's name, with its source when it has one (memory is measured from several).
func propName(ck results.Check) string {
	if ck.Source != "" {
		return ck.Name + "[" + ck.Source + "]"
	}
	return ck.Name
}

// propValue reads like "pass 1874.2 ms (limit ≤ 2500 ms)" or "fail: no media".
func propValue(ck results.Check) string {
	s := string(ck.Status)
	if ck.Value != nil {
		s += " " + number(*ck.Value, ck.Unit)
		if ck.Limit != nil {
			s += " (limit " + checks.KindOf(ck.Name).Op() + " " + number(*ck.Limit, ck.Unit) + ")"
		}
	}
	if ck.Detail != "" && ck.Status != results.Pass {
		s += ": " + words.FirstLine(ck.Detail)
	}
	return s
}

func seconds(ms float64) string { return strconv.FormatFloat(ms/1000, 'f', 3, 64) }

func timestamp(l results.Result) string {
	if l.StartedAt.IsZero() {
		return ""
	}
	return l.StartedAt.UTC().Format("2006-01-02T15:04:05")
}
