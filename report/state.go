package report

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/diffusion-check/diffusion-check/checks"
)

// State is what a comment records about its run, hidden in the comment, so that the next
// run can say what changed and show the lanes that it did not run itself.
type State struct {
	Lanes []LaneState `json:"lanes"`
	// Failing names every request (lane/case/index) or case (lane/case) that did not pass.
	Failing []string `json:"failing,omitempty"`
	// Truncated marks a Failing list cut at maxStateFailing entries.
	Truncated bool `json:"truncated,omitempty"`
}

// LaneState is one lane's verdict as a comment header shows it.
type LaneState struct {
	Name     string        `json:"name"`
	Status   checks.Status `json:"status"`
	RunURL   string        `json:"run_url,omitempty"`
	RunLabel string        `json:"run_label,omitempty"`
}

// maxStateFailing bounds the hidden state, so that it never crowds out the report.
const maxStateFailing = 300

// Marker is the hidden line that identifies the comment of a key.
func Marker(key string) string { return "<!-- diffusion-check:" + key + " -->" }

const statePrefix = "<!-- diffusion-check-state:"

var stateRE = regexp.MustCompile(`<!-- diffusion-check-state:([A-Za-z0-9+/=]*) -->`)

// ParseState reads the state a comment recorded. A comment without one (or with one that
// does not decode: a hand-edited comment) has none: nil, no error, since the worst outcome
// is a report that cannot say what changed.
func ParseState(body string) *State {
	m := stateRE.FindStringSubmatch(body)
	if m == nil {
		return nil
	}
	data, err := base64.StdEncoding.DecodeString(m[1])
	if err != nil {
		return nil
	}
	var s State
	if json.Unmarshal(data, &s) != nil {
		return nil
	}
	return &s
}

// State returns what this report records for the next run: its lanes' verdicts (and those
// of the previous state's other lanes) and what did not pass.
func (r *Report) State() State {
	var s State
	for _, l := range r.headerLanes() {
		if l.Status != statusPending {
			s.Lanes = append(s.Lanes, l)
		}
	}
	s.Failing = failingKeys(r.Lanes)
	if len(s.Failing) > maxStateFailing {
		s.Failing, s.Truncated = s.Failing[:maxStateFailing], true
	}
	return s
}

func (s State) encode() string {
	data, _ := json.Marshal(s) // a State always marshals
	return statePrefix + base64.StdEncoding.EncodeToString(data) + " -->"
}

const statusPending checks.Status = "pending"

// headerLanes is the lanes the header shows: this report's, the pending ones, then the other
// lanes the previous comment knew.
func (r *Report) headerLanes() []LaneState {
	var out []LaneState
	have := map[string]bool{}
	for _, l := range r.Lanes {
		out = append(out, LaneState{Name: l.Lane, Status: l.Status, RunURL: r.RunURL, RunLabel: r.RunLabel})
		have[l.Lane] = true
	}
	for _, p := range r.Pending {
		if !have[p] {
			out = append(out, LaneState{Name: p, Status: statusPending, RunURL: r.RunURL, RunLabel: r.RunLabel})
			have[p] = true
		}
	}
	if r.Previous != nil {
		for _, l := range r.Previous.Lanes {
			if !have[l.Name] {
				out = append(out, l)
				have[l.Name] = true
			}
		}
	}
	return out
}

// failingKeys names what did not pass: lane/case/index for requests, lane/case for cases
// that failed without a failed request (a server that did not start).
func failingKeys(lanes []checks.Result) []string {
	var out []string
	for _, l := range lanes {
		for _, c := range l.Cases {
			if !bad(c.Status) {
				continue
			}
			n := 0
			for _, rr := range c.Requests {
				if bad(rr.Status) {
					out = append(out, fmt.Sprintf("%s/%s/%d", l.Lane, c.ID, rr.Index))
					n++
				}
			}
			if n == 0 {
				out = append(out, l.Lane+"/"+c.ID)
			}
		}
	}
	return out
}
