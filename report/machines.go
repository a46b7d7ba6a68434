package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/diffusion-check/diffusion-check/internal/words"
	"github.com/diffusion-check/diffusion-check/results"
)

// maxMachineRows bounds the table of machines in a comment; every results.json holds its own.
const maxMachineRows = 64

// machines is the collapsed table of where each partition ran: runner, labels, host, GPUs (with
// their UUIDs), driver and CUDA, CPU. Every field comes from a results file, so is escaped.
// Nothing is written when no lane recorded a machine (results from before they were).
func machines(b *strings.Builder, lanes []results.Result) {
	type row struct {
		lane string
		m    results.Machine
	}
	var rows []row
	for _, l := range lanes {
		for _, m := range l.Machines {
			rows = append(rows, row{l.Lane, m})
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "\n<details><summary>Where it ran: %s</summary>\n\n", words.Plural(len(rows), "partition"))
	b.WriteString("| lane | partition | runner | host | GPU | driver / CUDA | CPU |\n|---|---|---|---|---|---|---|\n")
	for i, r := range rows {
		if i == maxMachineRows {
			fmt.Fprintf(b, "\n_%s not shown (each results.json holds its machine)._\n", words.Plural(len(rows)-i, "more partition"))
			break
		}
		m := r.m
		runner := escape(m.RunnerName)
		if len(m.RunnerLabels) > 0 {
			runner += " (" + escape(strings.Join(m.RunnerLabels, ", ")) + ")"
		}
		var gpus []string
		for _, g := range m.GPUs {
			gpus = append(gpus, escape(g.Name)+" "+code(g.UUID))
		}
		gpu := strings.Join(gpus, "<br>")
		if m.NVMLNote != "" {
			gpu = strings.TrimPrefix(gpu+"<br>", "<br>") + "_" + escape(m.NVMLNote) + "_"
		}
		versions := ""
		if m.Driver != "" || m.CUDA != "" {
			versions = unknown(escape(m.Driver)) + " / " + unknown(escape(m.CUDA))
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", escape(r.lane), strconv.Itoa(m.Partition), unknown(runner), unknown(escape(m.Hostname)),
			unknown(gpu), unknown(versions), unknown(escape(m.CPU)))
	}
	b.WriteString("\n</details>\n")
}

// unknown is s (already escaped), or a dash for a field the machine did not give.
func unknown(s string) string {
	if s == "" {
		return "–"
	}
	return s
}
