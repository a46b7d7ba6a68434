package hostmem

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		in        string
		pid, ppid int
		bad       bool
	}{
		{in: "42 (python3) S 7 42 42 0 -1 4194560\n", pid: 42, ppid: 7},
		{in: "9 (a (b) c) R 1 9 9", pid: 9, ppid: 1}, // comm with spaces and parentheses
		{in: "9 () Z 3", pid: 9, ppid: 3},
		{in: "9 (x) S", bad: true},
		{in: "x (y) S 1", bad: true},
		{in: "9 x S 1", bad: true},
		{in: "9 (x) S -1", bad: true},
		{in: "", bad: true},
	} {
		pid, ppid, err := ParseStat([]byte(tc.in))
		if (err != nil) != tc.bad || pid != tc.pid || ppid != tc.ppid {
			t.Errorf("ParseStat(%q) = %d, %d, %v; want %d, %d, bad %v", tc.in, pid, ppid, err, tc.pid, tc.ppid, tc.bad)
		}
	}
}

func TestParseRssAnon(t *testing.T) {
	for _, tc := range []struct {
		in    string
		bytes uint64
		ok    bool
	}{
		{in: "Name:\tpython3\nRssAnon:\t  123456 kB\nRssFile:\t1 kB\n", bytes: 123456 << 10, ok: true},
		{in: "RssAnon:\t0 kB", bytes: 0, ok: true},
		{in: "RssAnonX:\t5 kB\n", ok: false},
		{in: "Name:\tkthreadd\nVmRSS:\t0 kB\n", ok: false},
		{in: "RssAnon:\t12 MB\n", ok: false},
		{in: "RssAnon:\tkB\n", ok: false},
	} {
		b, ok := ParseRssAnon([]byte(tc.in))
		if b != tc.bytes || ok != tc.ok {
			t.Errorf("ParseRssAnon(%q) = %d, %v; want %d, %v", tc.in, b, ok, tc.bytes, tc.ok)
		}
	}
}

// writeProc makes a fake /proc: pid → (ppid, RssAnon kB).
func writeProc(t *testing.T, procs map[string][2]string) string {
	dir := t.TempDir()
	for pid, p := range procs {
		d := filepath.Join(dir, pid)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "stat"), []byte(pid+" (w) S "+p[0]+" 0 0\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "status"), []byte("Name:\tw\nRssAnon:\t"+p[1]+" kB\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "uptime"), []byte("1 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestTree(t *testing.T) {
	proc := writeProc(t, map[string][2]string{
		"10": {"1", "100"}, "11": {"10", "200"}, "12": {"11", "300"}, "13": {"1", "5000"}, "14": {"13", "7"},
	})
	got, err := Descendants(proc, 10)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{10, 11, 12}, got); diff != "" {
		t.Errorf("Descendants (-want +got):\n%s", diff)
	}
	if got, err := Descendants(proc, 99); err != nil || got != nil {
		t.Errorf("Descendants of a missing root = %v, %v; want none", got, err)
	}
	if _, err := Descendants(filepath.Join(proc, "nope"), 10); err == nil {
		t.Error("Descendants of a missing /proc: want an error")
	}

	tr := NewTree(proc)
	defer tr.Close()
	tr.Set(got)
	if b, n := tr.RssAnon(); b != 600<<10 || n != 3 {
		t.Errorf("RssAnon = %d bytes from %d processes; want %d from 3", b, n, 600<<10)
	}
	// A process that left the tree is dropped; one that cannot be opened is skipped.
	tr.Set([]int{10, 12, 77})
	if b, n := tr.RssAnon(); b != 400<<10 || n != 2 || tr.Len() != 2 {
		t.Errorf("after Set: RssAnon = %d bytes from %d of %d; want %d from 2", b, n, tr.Len(), 400<<10)
	}
	// Values are read again on every call.
	if err := os.WriteFile(filepath.Join(proc, "12", "status"), []byte("RssAnon:\t1000 kB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := tr.RssAnon(); b != 1100<<10 {
		t.Errorf("after a change: RssAnon = %d, want %d", b, 1100<<10)
	}
	if a := testing.AllocsPerRun(100, func() { tr.RssAnon() }); a != 0 {
		t.Errorf("RssAnon allocates %v times per call, want 0", a)
	}
}

// TestOwnProcess reads the real /proc: this test process and its children.
func TestOwnProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc")
	}
	pids, err := Descendants("/proc", os.Getpid())
	if err != nil || len(pids) == 0 || pids[0] != os.Getpid() && !contains(pids, os.Getpid()) {
		t.Fatalf("Descendants(self) = %v, %v", pids, err)
	}
	tr := NewTree("/proc")
	defer tr.Close()
	tr.Set(pids)
	if b, n := tr.RssAnon(); n < 1 || b == 0 {
		t.Errorf("RssAnon(self) = %d bytes from %d processes", b, n)
	}
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("42 (python3) S 7 42 42 0 -1\n"))
	f.Add([]byte("9 (a (b) c) R 1 9 9"))
	f.Fuzz(func(t *testing.T, b []byte) {
		pid, ppid, err := ParseStat(b)
		if err == nil && (pid < 0 || ppid < 0) {
			t.Errorf("ParseStat(%q) = %d, %d", b, pid, ppid)
		}
	})
}

func FuzzParseRssAnon(f *testing.F) {
	f.Add([]byte("Name:\tx\nRssAnon:\t 12 kB\n"))
	f.Add([]byte("RssAnon: 1 kB"))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, ok := ParseRssAnon(b)
		if !ok && v != 0 {
			t.Errorf("ParseRssAnon(%q) = %d, false", b, v)
		}
	})
}
