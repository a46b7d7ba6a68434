package plan

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/diffusion-check/diffusion-check/suite"
	"github.com/google/go-cmp/cmp"
)

// sglangShaped is a case set shaped like SGLang's diffusion suite: 40 cases of 60–900 s, a
// 120 s server start each, and a few models whose cases share one reusable server.
func sglangShaped(seed uint64) []Item {
	r := rand.New(rand.NewPCG(seed, 7))
	var items []Item
	for i := range 40 {
		it := Item{Case: fmt.Sprintf("case_%02d", i), Server: fmt.Sprintf("own_%02d", i), RunS: float64(60 + r.IntN(841)), StartS: 120, Source: "baseline"}
		if i < 18 { // six shared models with three cases each
			it.Server, it.Reuse = fmt.Sprintf("shared_%d", i/3), true
		}
		items = append(items, it)
	}
	return items
}

func TestPlanEveryCaseOnceAndDeterministic(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 10, 50} {
		items := sglangShaped(1)
		a, b := Make("s", "base", items, n), Make("s", "base", slices.Clone(items), n)
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Fatalf("n=%d: two plans of the same input differ", n)
		}
		var all []string
		for i, p := range a.Partitions {
			if p.Index != i {
				t.Errorf("n=%d: partition %d has index %d", n, i, p.Index)
			}
			all = append(all, p.Cases...)
		}
		slices.Sort(all)
		var want []string
		for _, it := range items {
			want = append(want, it.Case)
		}
		if diff := cmp.Diff(want, all); diff != "" {
			t.Errorf("n=%d: cases (-want +got):\n%s", n, diff)
		}
		if want := min(n, len(items)); len(a.Partitions) != want || a.Total != want {
			t.Errorf("n=%d: %d partitions, want %d", n, len(a.Partitions), want)
		}
	}
}

// TestPlanQuality compares the plan with SGLang's LPT on SGLang-shaped sets: the longest
// partition must stay within 5% of the ideal (total / N of our own starts) and never be longer
// than LPT's. The figures are in docs/planning.md.
func TestPlanQuality(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		for _, n := range []int{4, 6, 8, 10} {
			items := sglangShaped(seed)
			p := Make("s", "base", items, n)
			lpt := slices.Max(sglangSplit(items, n))
			if p.LongestS > p.IdealS*1.05 {
				t.Errorf("seed %d n=%d: longest %.0f s is %.1f%% over the ideal %.0f s", seed, n, p.LongestS, 100*(p.LongestS/p.IdealS-1), p.IdealS)
			}
			if p.LongestS > lpt {
				t.Errorf("seed %d n=%d: longest %.0f s, LPT's %.0f s", seed, n, p.LongestS, lpt)
			}
			var lptTotal float64
			for _, l := range sglangSplit(items, n) {
				lptTotal += l
			}
			t.Logf("| %d | %2d | %6.0f | %6.0f (+%.1f%%) | %d | %6.0f | %6.0f (+%.1f%%) | %d | %.1f%% |",
				seed, n, p.LongestS, p.IdealS, 100*(p.LongestS/p.IdealS-1), totalStarts(p),
				lpt, lptTotal/float64(n), 100*(lpt/(lptTotal/float64(n))-1), len(items), 100*(1-p.LongestS/lpt))
		}
	}
}

// TestPlanPackingWithoutReuse compares the packing alone: no server is shared, so both plans
// pay the same starts and any gain is from moving and swapping cases after LPT.
func TestPlanPackingWithoutReuse(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		for _, n := range []int{4, 6, 8, 10} {
			items := sglangShaped(seed)
			for i := range items {
				items[i].Reuse, items[i].Server = false, items[i].Case
			}
			p := Make("s", "base", items, n)
			lpt := slices.Max(sglangSplit(items, n))
			if p.LongestS > lpt {
				t.Errorf("seed %d n=%d: longest %.0f s, LPT's %.0f s", seed, n, p.LongestS, lpt)
			}
			t.Logf("| %d | %2d | %6.0f | %6.0f | %6.0f (+%.2f%%) |", seed, n, p.LongestS, lpt, p.IdealS, 100*(p.LongestS/p.IdealS-1))
		}
	}
}

func totalStarts(p *Plan) int {
	n := 0
	for _, pp := range p.Partitions {
		n += pp.ServerStarts
	}
	return n
}

func TestPlanKeepsSmallReuseGroupsTogether(t *testing.T) {
	items := []Item{
		{Case: "a1", Server: "a", Reuse: true, RunS: 10, StartS: 100},
		{Case: "a2", Server: "a", Reuse: true, RunS: 10, StartS: 100},
		{Case: "a3", Server: "a", Reuse: true, RunS: 10, StartS: 100},
		{Case: "x", Server: "x", RunS: 120, StartS: 10},
	}
	p := Make("s", "", items, 2)
	got := [][]string{p.Partitions[0].Cases, p.Partitions[1].Cases}
	slices.SortFunc(got, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	if diff := cmp.Diff([][]string{{"a1", "a2", "a3"}, {"x"}}, got); diff != "" {
		t.Errorf("partitions (-want +got):\n%s", diff)
	}
	if p.LongestS != 130 {
		t.Errorf("longest %v, want 130 (one start for the three reuse cases)", p.LongestS)
	}
}

func TestPlanSplitsALargeReuseGroup(t *testing.T) {
	var items []Item
	for i := range 8 {
		items = append(items, Item{Case: fmt.Sprintf("c%d", i), Server: "big", Reuse: true, RunS: 100, StartS: 20})
	}
	p := Make("s", "", items, 2)
	if p.Partitions[0].EstimatedS != 420 || p.Partitions[1].EstimatedS != 420 {
		t.Errorf("partitions %+v, want 4 cases and one start each (420 s)", p.Partitions)
	}
}

type fakeEstimates map[string][2]float64

func (f fakeEstimates) FullTestTime(id string) (float64, bool) {
	v, ok := f[id]
	return v[0], ok && v[0] > 0
}
func (f fakeEstimates) ExpectedE2E(id string) (float64, bool) {
	v, ok := f[id]
	return v[1], ok && v[1] > 0
}

func TestItemsEstimateSources(t *testing.T) {
	s := &suite.Suite{
		Servers: map[string]*suite.Server{"srv": {Name: "srv", StartEstimate: 120 * time.Second}},
		Cases: []*suite.Case{
			{ID: "own", Server: "srv", Repeat: 2, Estimate: 200 * time.Second},
			{ID: "base", Server: "srv", Repeat: 2},
			{ID: "e2e", Server: "srv", Repeat: 2},
			{ID: "none", Server: "srv", Repeat: 2},
		},
	}
	items := itemsOf(s, "", fakeEstimates{"base": {500, 0}, "e2e": {0, 30000}})
	got := map[string][2]any{}
	for _, it := range items {
		got[it.Case] = [2]any{it.RunS, it.Source}
	}
	want := map[string][2]any{
		"own":  {80.0, "case"},
		"base": {380.0, "baseline"},
		"e2e":  {60.0, "expected_e2e"},
		"none": {180.0, "default"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("estimates (-want +got):\n%s", diff)
	}
	if p := Make("s", "", items, 1); !slices.Equal(p.Defaulted, []string{"none"}) {
		t.Errorf("defaulted %v", p.Defaulted)
	}
}

func TestPartitionsFor(t *testing.T) {
	items := sglangShaped(1)
	total := load(items)
	for _, c := range []struct {
		target float64
		max    int
		want   int
	}{{total, 10, 1}, {total / 3.5, 10, 4}, {60, 10, 10}, {1e9, 10, 1}} {
		if got := PartitionsFor(items, c.target, c.max); got != c.want {
			t.Errorf("PartitionsFor(target %.0f, max %d) = %d, want %d", c.target, c.max, got, c.want)
		}
	}
}

// TestPlanNeverEmptyPartitions asks for more partitions than there are cases to fill them,
// with zero-cost and reuse cases that an LPT split would leave behind, and up to a million:
// no partition is empty, the plan is capped at the cases and at GitHub's 256 matrix jobs, it
// says how many were asked for, and planning again with its Total gives the same plan.
func TestPlanNeverEmptyPartitions(t *testing.T) {
	many := make([]Item, 300)
	for i := range many {
		many[i] = Item{Case: fmt.Sprintf("c%03d", i), Server: "s", RunS: 10, StartS: 1}
	}
	zero := []Item{
		{Case: "a", Server: "shared", Reuse: true},
		{Case: "b", Server: "shared", Reuse: true},
		{Case: "c", Server: "own"},
	}
	for _, tc := range []struct {
		name      string
		items     []Item
		n         int
		total     int // at most, for reuse groups that stay together
		requested int
	}{
		{"more partitions than cases", sglangShaped(3), 41, 40, 41},
		{"a million partitions", sglangShaped(3), 1000000, 40, 1000000},
		{"capped at 256", many, 1000, MaxPartitions, 1000},
		{"zero-cost cases", zero, 3, 1, 3},
		{"exactly enough", many[:5], 5, 5, 0},
		{"capped exactly at 256", many, 300, MaxPartitions, 300},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Make("s", "base", tc.items, tc.n)
			if p.Total < 1 || p.Total > tc.total || len(p.Partitions) != p.Total || p.Requested != tc.requested {
				t.Fatalf("total %d (%d partitions), requested %d; want 1..%d, %d", p.Total, len(p.Partitions), p.Requested, tc.total, tc.requested)
			}
			for _, pp := range p.Partitions {
				if len(pp.Cases) == 0 {
					t.Errorf("partition %d/%d is empty", pp.Index, p.Total)
				}
			}
			again := Make("s", "base", tc.items, p.Total)
			if again.Hash != p.Hash {
				t.Errorf("planning again with %d partitions gives another split", p.Total)
			}
		})
	}
}

// TestWidenGivesEveryJobOfAStaticMatrixItsPartition: a plan asked for more partitions than
// it could fill is widened with empty ones to the count asked for, the same way in every job
// (one hash); the cases keep their partitions; any other plan stays as it is.
func TestWidenGivesEveryJobOfAStaticMatrixItsPartition(t *testing.T) {
	items := []Item{{Case: "a", Server: "s", RunS: 100}, {Case: "b", Server: "s", RunS: 90}}
	p := Make("s", "base", items, 4)
	w := p.Widen(4)
	if w.Total != 4 || len(w.Partitions) != 4 || w.Requested != 0 {
		t.Fatalf("widened: total %d, %d partitions, requested %d; want 4, 4, 0", w.Total, len(w.Partitions), w.Requested)
	}
	if diff := cmp.Diff([][]string{p.Cases(0), p.Cases(1), {}, {}}, w.CaseLists()); diff != "" {
		t.Errorf("widened partitions (-want +got):\n%s", diff)
	}
	if w.Hash == p.Hash || w.Hash != Make("s", "base", items, 4).Widen(4).Hash {
		t.Errorf("hash %s (plan %s): want one of its own, the same in every job", w.Hash, p.Hash)
	}
	for _, n := range []int{1, 2, 3, 5} {
		if got := p.Widen(n); got != p {
			t.Errorf("Widen(%d) of a plan asked for 4 changed it", n)
		}
	}
}

// TestCheckSuiteRefusesStalePlans: a plan refuses a suite whose lane has a case it neither
// planned nor deselected, one it planned that is gone or in another lane, and a case list
// hash that is not the lane's; the suite it was made from, with cases of other lanes added, is
// fine.
func TestCheckSuiteRefusesStalePlans(t *testing.T) {
	parse := func(ids ...string) *suite.Suite {
		var b strings.Builder
		b.WriteString("servers:\n  ref: {builtin: {}}\ncases:\n")
		for _, id := range ids {
			lane, id, _ := strings.Cut(id, ":")
			fmt.Fprintf(&b, "  - {id: %s, lane: %s, server: ref, modality: image, request: {size: 8x8}}\n", id, lane)
		}
		s, err := suite.Parse("suite.yaml", []byte(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	plan, err := ForSuite(parse("base:a", "base:b"), "base", "", 2)
	if err != nil {
		t.Fatal(err)
	}
	edited := *plan
	edited.CasesHash = "0000000000000000"
	for _, tc := range []struct {
		name  string
		plan  *Plan
		suite *suite.Suite
		want  string // "" for no error
	}{
		{"same suite", plan, parse("base:a", "base:b"), ""},
		{"a case of another lane added", plan, parse("base:a", "base:b", "extra:x"), ""},
		{"a case added to the lane", plan, parse("base:a", "base:b", "base:new"), `case "new" of lane "base" is neither planned nor deselected`},
		{"a planned case gone", plan, parse("base:a"), `case "b" is not in suite `},
		{"a planned case moved to another lane", plan, parse("base:a", "extra:b"), `case "b" is not in lane "base" of suite `},
		{"edited case list hash", &edited, parse("base:a", "base:b"), "cases_hash 0000000000000000 is not the hash of the lane's 2 cases"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.plan.CheckSuite(tc.suite)
			if got := fmt.Sprint(err); (tc.want == "") != (err == nil) || !strings.Contains(got, tc.want) {
				t.Errorf("CheckSuite = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestSuiteItemsFolderWithoutClass: a folder of baselines and no GPU class plans the split
// without their estimates, as the plan job (no GPU) must; the checks still need the class,
// which a run detects afterwards (runner's loadPerf).
func TestSuiteItemsFolderWithoutClass(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "perf")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// SGLang's 5090 file, as the file an h200 class reads (h100.json: SGLang chooses the file
	// by compute capability, baselines.ChoosePlatform): it has an estimate for this scenario.
	data, err := os.ReadFile("../baselines/testdata/sglang/perf_baselines/5090.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "h100.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	const id = "flux_2_klein_base_image_t2i"
	s := &suite.Suite{Baselines: dir, Servers: map[string]*suite.Server{"srv": {Name: "srv"}},
		Cases: []*suite.Case{{ID: id, Server: "srv", Lane: "base", Repeat: 1}}}
	items, err := SuiteItems(s, "base", "")
	if err != nil {
		t.Fatalf("no class: %v", err)
	}
	if len(items) != 1 || items[0].Source != "default" {
		t.Errorf("no class: items %+v, want the default estimate", items)
	}
	items, err = SuiteItems(s, "base", "h200")
	if err != nil || len(items) != 1 || items[0].Source != "baseline" {
		t.Errorf("h200: items %+v, err %v; want the baseline's estimate", items, err)
	}
}
