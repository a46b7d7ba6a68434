package report

import (
	"fmt"
	"strings"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/words"
	"github.com/diffusion-check/diffusion-check/results"
)

// PictureKey names a failure picture of one request, as the runner draws it: the worst frame
// of a consistency failure against the ground truth (ground truth | output | SSIM map), or,
// with Repeat, against request 1 of its server start (request 1 | request k | SSIM map); with
// Memory, a memory failure's timeline (Request 0: the server start's load).
type PictureKey struct {
	Lane, Case string
	Request    int
	Repeat     bool
	Memory     bool
}

// maxPictures is how many failure pictures a report shows inline; the rest are in the
// artifacts.
const maxPictures = 12

// pictureWidth is the width, in CSS pixels, that a picture is shown at: three across the
// 860 px of a comment, each opening at full size in its own tab.
const pictureWidth = 270

// pictureList writes the failure pictures of the consistency and consistency.repeat
// failures that have one (Report.Pictures, URLs that cmd got by uploading them), small and
// inline under the problems, each linking to its full size, in the order of the problems.
func pictureList(b *strings.Builder, r *Report, lv level) {
	if len(r.Pictures) == 0 || !lv.tables {
		return
	}
	var cells []string
	more, repeats := 0, 0
	for _, l := range r.Lanes {
		for _, c := range l.Cases {
			cells, more = memoryPictures(cells, more, r, l, c)
			for _, rr := range c.Requests {
				for _, repeat := range []bool{false, true} {
					url := r.Pictures[PictureKey{Lane: l.Lane, Case: c.ID, Request: rr.Index, Repeat: repeat}]
					if !safeURL(url) || !groupFailed(rr, pictureGroup(repeat)) {
						continue
					}
					if len(cells) == maxPictures {
						more++
						continue
					}
					alt := fmt.Sprintf("%s request %d/%d: ground truth | output | SSIM map", c.ID, rr.Index, rr.Of)
					if repeat {
						repeats++
						alt = fmt.Sprintf("%s request %d/%d: request 1 | request %d | SSIM map", c.ID, rr.Index, rr.Of, rr.Index)
					}
					if len(r.Lanes) > 1 {
						alt = l.Lane + " " + alt
					}
					alt = escape(alt)
					cells = append(cells, fmt.Sprintf(`<a href="%s"><img src="%s" width="%d" alt="%s" title="%s"></a>`, url, url, pictureWidth, alt, alt))
				}
			}
		}
	}
	if len(cells) == 0 {
		return
	}
	legend := "ground truth | output | SSIM map"
	switch repeats {
	case len(cells) - memories(cells):
		legend = "request 1 | request k | SSIM map"
	case 0:
	default:
		legend += ", or request 1 | request k | SSIM map across requests"
	}
	if memories(cells) == len(cells) {
		legend = "memory over time: the limit dashed, the failing window shaded, the peak ringed"
	} else if memories(cells) > 0 {
		legend += "; memory over time"
	}
	b.WriteString("\n**Worst frames** (" + legend + "; click for full size)\n\n<p>\n")
	b.WriteString(strings.Join(cells, "\n"))
	b.WriteString("\n</p>\n")
	if more > 0 {
		link := "the artifacts"
		if r.ArtifactsURL != "" {
			link = "[the artifacts](" + r.ArtifactsURL + ")"
		}
		fmt.Fprintf(b, "\n_%s more in %s._\n", words.Plural(more, "picture"), link)
	}
}

// memoryAlt starts the alt text of a memory picture, which memories counts.
const memoryAlt = "memory over time: "

// memoryPictures adds the memory pictures of case c (its load, then each request that failed
// a memory check) to cells, up to maxPictures, counting the rest in more.
func memoryPictures(cells []string, more int, r *Report, l results.Result, c results.CaseResult) ([]string, int) {
	add := func(index int, what string) {
		url := r.Pictures[PictureKey{Lane: l.Lane, Case: c.ID, Request: index, Memory: true}]
		if !safeURL(url) {
			return
		}
		if len(cells) == maxPictures {
			more++
			return
		}
		alt := memoryAlt + c.ID + " " + what
		if len(r.Lanes) > 1 {
			alt = memoryAlt + l.Lane + " " + c.ID + " " + what
		}
		alt = escape(alt)
		cells = append(cells, fmt.Sprintf(`<a href="%s"><img src="%s" width="%d" alt="%s" title="%s"></a>`, url, url, pictureWidth, alt, alt))
	}
	if checksFailed(c.Checks, checks.GroupMemory) {
		add(0, "load")
	}
	for _, rr := range c.Requests {
		if checksFailed(rr.Checks, checks.GroupMemory) {
			add(rr.Index, fmt.Sprintf("request %d/%d", rr.Index, rr.Of))
		}
	}
	return cells, more
}

// memories counts the memory pictures among cells.
func memories(cells []string) int {
	n := 0
	for _, c := range cells {
		if strings.Contains(c, `alt="`+memoryAlt) {
			n++
		}
	}
	return n
}

// pictureGroup is the group of checks a failure picture shows: consistency against the
// ground truth, or consistency.repeat against request 1.
func pictureGroup(repeat bool) checks.Group {
	if repeat {
		return checks.GroupRepeat
	}
	return checks.GroupConsistency
}

// groupFailed says whether a request failed a check of group g (not a known failure): what
// its picture shows.
func groupFailed(rr results.RequestResult, g checks.Group) bool { return checksFailed(rr.Checks, g) }

// checksFailed says whether a check of group g among cs failed (not a known failure).
func checksFailed(cs []results.Check, g checks.Group) bool {
	for _, ck := range cs {
		if failed(ck.Status) && ck.Status != results.Known && checks.KindOf(ck.Name).Group == g {
			return true
		}
	}
	return false
}

// safeURL says whether url can go into an HTML attribute as it is: http(s), and none of
// the characters that would end the attribute or the tag, or make it a Markdown construct.
func safeURL(url string) bool {
	return (strings.HasPrefix(url, "https://") || strings.HasPrefix(url, "http://")) &&
		!strings.ContainsAny(url, "\"'<>` \t\n\r\\")
}
