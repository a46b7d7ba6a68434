package report

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/diffusion-check/diffusion-check/results"
)

// State is what a comment records about its run, hidden in the comment, so that the next
// run can say what changed and show the lanes that it did not run itself.
type State struct {
	// V is the state's version: 2 records Failing as stateKeys; a state without one (1)
	// recorded the keys as they are, and ParseState makes them stateKeys.
	V     int         `json:"v,omitempty"`
	Lanes []LaneState `json:"lanes"`
	// Failing names every request (lane/case/index) or case (lane/case) that did not pass,
	// each as its stateKey.
	Failing []string `json:"failing,omitempty"`
	// Truncated marks a state cut to fit maxStateBytes: Failing (or Lanes) lacks entries.
	Truncated bool `json:"truncated,omitempty"`
}

// stateVersion is the version State records.
const stateVersion = 2

// stateKey is the compact form of a failing key (lane/case/index, or lane/case) that the
// state records: the lane, then the first 12 hex digits of the SHA-256 of the rest. A key
// then costs about 20 bytes whatever its case id: with ids of 100 characters (the longest a
// name may be), 300 keys as they were took 44 KB of the comment's 64 KB.
func stateKey(k string) string {
	lane, rest, _ := strings.Cut(k, "/")
	h := sha256.Sum256([]byte(rest))
	return lane + "/" + hex.EncodeToString(h[:6])
}

// stateKeys are the stateKeys of keys.
func stateKeys(keys []string) []string {
	var out []string
	for _, k := range keys {
		out = append(out, stateKey(k))
	}
	return out
}

// LaneState is one lane's verdict as a comment header shows it.
type LaneState struct {
	Name     string         `json:"name"`
	Status   results.Status `json:"status"`
	RunURL   string         `json:"run_url,omitempty"`
	RunLabel string         `json:"run_label,omitempty"`
}

// maxStateBytes is the hidden state's own budget in the comment (the encoded line): the
// report renders in what is left, so the state never crowds it out, whatever the ids.
const maxStateBytes = 12 << 10

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
	if s.V < stateVersion { // keys as they were: compare them as stateKeys
		s.Failing, s.V = stateKeys(s.Failing), stateVersion
	}
	return &s
}

// State returns what this report records for the next run: the verdicts of the lanes its
// header shows (pending ones apart) and what did not pass, sorted: this report's lanes', and
// those the previous comment recorded of another lane that is shown as it recorded it.
func (r *Report) State() State {
	var s State
	carried := map[string]bool{}
	for _, l := range r.headerLanes() {
		if l.Status == statusPending {
			continue
		}
		s.Lanes = append(s.Lanes, l)
		if r.Previous != nil && slices.Contains(r.Previous.Lanes, l) && !slices.ContainsFunc(r.Lanes, func(o results.Result) bool { return o.Lane == l.Name }) {
			carried[l.Name] = true
		}
	}
	s.V = stateVersion
	s.Failing = stateKeys(failingKeys(r.Lanes))
	if r.Previous != nil {
		for _, k := range r.Previous.Failing {
			if lane, _, _ := strings.Cut(k, "/"); carried[lane] {
				s.Failing = append(s.Failing, k)
			}
		}
	}
	slices.Sort(s.Failing)
	s.Failing = slices.Compact(s.Failing)
	s.fit()
	return s
}

// fit cuts s until it encodes within maxStateBytes, marking it Truncated: failing keys first
// (the comment then says "perhaps more" of what was fixed), then lanes, last first.
func (s *State) fit() {
	for len(s.encode()) > maxStateBytes {
		s.Truncated = true
		switch {
		case len(s.Failing) > 0:
			// Each key costs at least 4/3 × its length in base64: cut what is surely over.
			over := len(s.encode()) - maxStateBytes
			cut := 1
			for n := 0; cut < len(s.Failing) && n < over*3/4; cut++ {
				n += len(s.Failing[len(s.Failing)-cut]) + 3
			}
			s.Failing = s.Failing[:len(s.Failing)-cut]
		case len(s.Lanes) > 0:
			s.Lanes = s.Lanes[:len(s.Lanes)-1]
		default:
			return
		}
	}
}

func (s State) encode() string {
	data, _ := json.Marshal(s) // a State always marshals
	return statePrefix + base64.StdEncoding.EncodeToString(data) + " -->"
}

const statusPending results.Status = "pending"

// headerLanes is the lanes the header shows: this report's, then every other lane GitHub
// holds a status of on the head commit (Others; a lane that was only expected shows as
// pending), then the expected lanes without a status (pending). Where Others were not read,
// the previous comment's other lanes take their place. A lane of Others keeps what the
// previous comment recorded of it (a known or flaky pass, the run's label) when that is the
// same run and the same state.
func (r *Report) headerLanes() []LaneState {
	var out []LaneState
	have := map[string]bool{}
	add := func(l LaneState) {
		if !have[l.Name] {
			out = append(out, l)
			have[l.Name] = true
		}
	}
	for _, l := range r.Lanes {
		add(LaneState{Name: l.Lane, Status: l.Status, RunURL: r.RunURL, RunLabel: r.RunLabel})
	}
	var prev []LaneState
	if r.Previous != nil {
		prev = r.Previous.Lanes
	}
	for _, st := range r.Others {
		l := LaneState{Name: st.Lane, Status: laneOfState(st.State), RunURL: st.TargetURL}
		for _, p := range prev {
			if p.Name == st.Lane && p.RunURL == st.TargetURL && statusState(p.Status) == st.State {
				l = p
			}
		}
		add(l)
	}
	for _, p := range r.Pending {
		add(LaneState{Name: p, Status: statusPending, RunURL: r.RunURL, RunLabel: r.RunLabel})
	}
	if r.Others == nil {
		for _, l := range prev {
			add(l)
		}
	}
	return out
}

// failingKeys names what did not pass: lane/case/index for requests, lane/case for cases
// that failed without a failed request (a server that did not start).
func failingKeys(lanes []results.Result) []string {
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
