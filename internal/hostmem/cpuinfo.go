package hostmem

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// CPUModel returns the CPU model named by proc's cpuinfo (e.g. "/proc"), or "" when the file
// cannot be read or names none. A machine's results record it, so that two runners of one GPU
// class with different hosts can be told apart.
func CPUModel(proc string) string {
	// cpuinfo is small (a few KiB per core); a cap keeps a strange mount from costing more.
	f, err := os.Open(filepath.Join(proc, "cpuinfo"))
	if err != nil {
		return ""
	}
	defer func() { _ = f.Close() }() // read only: a failed close loses nothing
	var b bytes.Buffer
	if _, err := b.ReadFrom(io.LimitReader(f, 4<<20)); err != nil {
		return ""
	}
	return ParseCPUModel(b.Bytes())
}

// ParseCPUModel reads the CPU model from the content of /proc/cpuinfo: the first "model name"
// (x86, and arm64 kernels that give it), else "Hardware" (older arm kernels), else the first
// processor's "CPU implementer" and "CPU part" (arm64, which names no model: the numbers are
// what lscpu looks up). "" when there is none.
func ParseCPUModel(cpuinfo []byte) string {
	var hardware, implementer, part string
	sc := bufio.NewScanner(bytes.NewReader(cpuinfo))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.Join(strings.Fields(v), " ")
		switch {
		case v == "":
		case k == "model name":
			return v
		case k == "Hardware" && hardware == "":
			hardware = v
		case k == "CPU implementer" && implementer == "":
			implementer = v
		case k == "CPU part" && part == "":
			part = v
		}
	}
	switch {
	case hardware != "":
		return hardware
	case implementer != "":
		return "CPU implementer " + implementer + " part " + part
	}
	return ""
}
