package hostmem

import (
	"os"
	"path/filepath"
	"testing"
)

func TestParseCPUModel(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"x86", "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9654 96-Core Processor\nflags\t\t: fpu\n\nprocessor\t: 1\nmodel name\t: " +
			"other\n", "AMD EPYC 9654 96-Core Processor"},
		{"spaces inside the name collapse", "model name\t: Intel(R) Xeon(R)   Platinum 8480+\n", "Intel(R) Xeon(R) Platinum 8480+"},
		{"arm64 without a model name", "processor\t: 0\nBogoMIPS\t: 2000.00\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU part\t: 0xd4f\n\nprocessor\t: " +
			"1\nCPU implementer\t: 0x48\nCPU part\t: 0xd01\n", "CPU implementer 0x41 part 0xd4f"},
		{"older arm", "Processor\t: ARMv7\nHardware\t: BCM2835\n", "BCM2835"},
		{"empty model name", "model name\t:\n", ""},
		{"nothing", "", ""},
		{"no colon", "garbage\n", ""},
	} {
		if got := ParseCPUModel([]byte(tc.in)); got != tc.want {
			t.Errorf("%s: ParseCPUModel = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestCPUModel(t *testing.T) {
	dir := t.TempDir()
	if got := CPUModel(dir); got != "" {
		t.Errorf("without cpuinfo: %q, want \"\"", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "cpuinfo"), []byte("model name\t: Test CPU\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := CPUModel(dir); got != "Test CPU" {
		t.Errorf("CPUModel = %q, want Test CPU", got)
	}
}
