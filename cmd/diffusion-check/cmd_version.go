package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/diffusion-check/diffusion-check/internal/gpumem"
	"github.com/diffusion-check/diffusion-check/internal/kernel"
)

// Link-time stamps of a release build (.goreleaser.yaml, Dockerfile):
//
//	-ldflags "-X main.stampVersion=v1.2.3 -X main.stampCommit=<sha> -X main.stampDate=<RFC 3339>"
//
// The linker can set only package-level strings, hence these three variables, read once by
// versionCmd. A plain go build leaves them empty and the build info fills what it knows.
var (
	stampVersion string
	stampCommit  string
	stampDate    string
)

// stamps are the link-time values, passed explicitly so tests can give their own.
type stamps struct{ Version, Commit, Date string }

// versionInfo is what `diffusion-check version` prints, one field a line.
type versionInfo struct {
	Version  string // release tag (v1.2.3), or the module version Go derived, or (devel)
	Commit   string // VCS revision, +dirty when built from a modified tree
	Date     string // build time of a release; otherwise the commit time, or unknown
	Go       string // Go version and any GOEXPERIMENT (simd: the vector kernels are compiled in)
	Platform string // GOOS/GOARCH
	NVML     string // whether NVML loaded here, and the GPUs it sees, or why not
	// SSIMKernel is the SSIM kernel this CPU gets (avx512, avx2 or portable).
	SSIMKernel string
}

// newVersionInfo fills the build fields from the stamps, falling back to the build info.
// NVML and SSIMKernel depend on the machine and are filled by versionCmd.
func newVersionInfo(st stamps, bi *debug.BuildInfo) versionInfo {
	v := versionInfo{
		Version: st.Version, Commit: st.Commit, Date: st.Date,
		Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH,
	}
	var rev, modified, vcsTime, experiment string
	if bi != nil {
		v.Go = bi.GoVersion
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value
			case "vcs.time":
				vcsTime = s.Value
			case "GOEXPERIMENT":
				experiment = s.Value
			}
		}
		if v.Version == "" {
			v.Version = bi.Main.Version
		}
	}
	// Go's own version string may already carry the experiment (go1.26.8-X:simd).
	if experiment != "" && !strings.Contains(v.Go, "X:"+experiment) {
		v.Go += " (GOEXPERIMENT=" + experiment + ")"
	}
	if v.Commit == "" && rev != "" {
		v.Commit = rev
		if modified == "true" {
			v.Commit += "+dirty"
		}
	}
	if v.Date == "" && vcsTime != "" {
		v.Date = vcsTime + " (commit time; not a release build)"
	}
	for _, f := range []*string{&v.Version, &v.Commit, &v.Date} {
		if *f == "" {
			*f = "unknown"
		}
	}
	return v
}

// write prints the first line as earlier versions did ("diffusion-check VERSION"), then one
// "key: value" line per field, so scripts can grep either.
func (v versionInfo) write(w io.Writer) error {
	_, err := fmt.Fprintf(w, "diffusion-check %s\n"+
		"commit:      %s\n"+
		"built:       %s\n"+
		"go:          %s\n"+
		"platform:    %s\n"+
		"nvml:        %s\n"+
		"ssim kernel: %s\n",
		v.Version, v.Commit, v.Date, v.Go, v.Platform, v.NVML, v.SSIMKernel)
	return err
}

// cudaVisibleDevices names the GPUs a runner gives its jobs (docs/github-actions.md): the
// memory sampler samples those (gpumem.Options.Visible).
const cudaVisibleDevices = "CUDA_VISIBLE_DEVICES"

// nvmlStatus says whether NVML loads on this machine and which GPUs it sees: those of
// visible, a CUDA_VISIBLE_DEVICES value ("" every GPU).
func nvmlStatus(visible string) string {
	s := gpumem.New(gpumem.Options{Visible: visible})
	defer s.Close() //nolint:errcheck // a probe: nothing was sampled that a failed shutdown could lose
	if why := s.Unavailable(); why != "" {
		return "not loaded (" + strings.TrimPrefix(why, "nvml unavailable: ") + ")"
	}
	names := s.DeviceNames()
	return "loaded, " + strconv.Itoa(len(names)) + " GPU(s): " + strings.Join(names, ", ")
}

// versionCmd prints the version, the build and what this machine gives the binary.
func versionCmd(e env) int {
	bi, _ := debug.ReadBuildInfo()
	v := newVersionInfo(stamps{stampVersion, stampCommit, stampDate}, bi)
	v.NVML = nvmlStatus(e.getenv(cudaVisibleDevices))
	v.SSIMKernel = fmt.Sprintf("%s (%s)", kernel.Selected(), kernel.Describe())
	if err := v.write(e.stdout); err != nil {
		return exitInfra
	}
	return exitOK
}
