package suite

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNoise checks that confirm and on_unconfirmed are inherited from the suite by servers
// and from servers by cases, and that the most specific level that sets one wins.
func TestNoise(t *testing.T) {
	const data = `
confirm: 2
servers:
  inherits: {builtin: {}}
  own: {builtin: {}, confirm: 3, on_unconfirmed: flaky}
  none: {builtin: {}, confirm: 0}
cases:
  - {id: a, server: inherits, modality: image, request: {size: 8x8}}
  - {id: b, server: own, modality: image, request: {size: 8x8}}
  - {id: c, server: own, modality: image, request: {size: 8x8}, confirm: 1}
  - {id: d, server: own, modality: image, request: {size: 8x8}, on_unconfirmed: fail}
  - {id: e, server: none, modality: image, request: {size: 8x8}}
  - {id: f, server: none, modality: image, request: {size: 8x8}, confirm: 10, on_unconfirmed: flaky}
`
	s, err := Parse("suite.yaml", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Noise{"suite": s.Noise}
	for name, srv := range s.Servers {
		got["server "+name] = srv.Noise
	}
	for _, c := range s.Cases {
		got["case "+c.ID] = c.Noise
	}
	want := map[string]Noise{
		"suite":           {Confirm: 2, OnUnconfirmed: "fail"},
		"server inherits": {Confirm: 2, OnUnconfirmed: "fail"},
		"server own":      {Confirm: 3, OnUnconfirmed: "flaky"},
		"server none":     {Confirm: 0, OnUnconfirmed: "fail"},
		"case a":          {Confirm: 2, OnUnconfirmed: "fail"},
		"case b":          {Confirm: 3, OnUnconfirmed: "flaky"},
		"case c":          {Confirm: 1, OnUnconfirmed: "flaky"},
		"case d":          {Confirm: 3, OnUnconfirmed: "fail"},
		"case e":          {Confirm: 0, OnUnconfirmed: "fail"},
		"case f":          {Confirm: 10, OnUnconfirmed: "flaky"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("noise (-want +got):\n%s", diff)
	}
}

func TestNoiseErrors(t *testing.T) {
	const data = `confirm: -1
on_unconfirmed: warn
servers:
  ref: {builtin: {}, confirm: 11, on_unconfirmed: ""}
cases:
  - {id: a, server: ref, modality: image, request: {size: 8x8}, confirm: "2"}
  - id: b
    server: ref
    modality: image
    request: {size: 8x8}
    confirm: 1.5
    on_unconfirmed: [flaky]
`
	want := []string{
		"suite.yaml:1: confirm: must not be negative, got -1",
		`suite.yaml:2: on_unconfirmed: unknown value "warn" (known: fail, flaky)`,
		"suite.yaml:4: servers.ref.confirm: must be ≤ 10, got 11; each confirmation request costs as much as a request of the case",
		`suite.yaml:4: servers.ref.on_unconfirmed: unknown value "" (known: fail, flaky)`,
		`suite.yaml:6: cases[0].confirm: want an integer, got "2"`,
		`suite.yaml:11: cases[1].confirm: want an integer, got "1.5"`,
		`suite.yaml:12: cases[1].on_unconfirmed: want a string, got a list`,
	}
	s, err := Parse("suite.yaml", []byte(data))
	if s != nil {
		t.Errorf("Parse returned a suite along with the error")
	}
	if diff := cmp.Diff(want, errLines(err)); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}
