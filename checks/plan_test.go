package checks

import "testing"

func TestNothingSelectedPasses(t *testing.T) {
	left := []Deselected{{Case: "a", Reason: "r"}}
	for _, tc := range []struct {
		name string
		r    Result
		want Status
	}{
		{"every case left out", Result{Planned: [][]string{{}}, Deselected: left}, Pass},
		{"merged lane, every case left out", Result{Deselected: left}, Pass},
		{"left out, but an error", Result{Deselected: left, Errors: []string{"boom"}}, Error},
		{"nothing left out and nothing run", Result{}, Error},
		{"a planned case did not run", Result{Planned: [][]string{{}, {"b"}}, Partition: Partition{Index: 1, Total: 2}, Deselected: left}, Error},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.r
			Finalize(&r)
			if r.Status != tc.want {
				t.Errorf("status %s, want %s", r.Status, tc.want)
			}
		})
	}
}
