package main

import (
	"crypto/rand"
	"fmt"
	"io"

	"github.com/diffusion-check/diffusion-check/internal/untrusted"
)

// stopCommands brackets text that diffusion-check did not write (results files, server
// output, case details) in a GitHub Actions log: "::stop-commands::TOKEN" before, "::TOKEN::"
// after. In between the runner runs no workflow command, so a line such as
// "  ::add-mask::x" or "::error::forged" (the runner trims leading space) is printed, not
// obeyed. The token is random per block, so the text cannot end the block itself.
// https://docs.github.com/actions/reference/workflows-and-actions/workflow-commands#stopping-and-starting-workflow-commands
type stopCommands struct {
	w     io.Writer
	token string // "" while commands run
}

// stop stops workflow commands, if they run.
func (s *stopCommands) stop() {
	if s.token == "" {
		s.token = rand.Text()
		fmt.Fprintf(s.w, "::stop-commands::%s\n", s.token)
	}
}

// resume starts workflow commands again, if they are stopped.
func (s *stopCommands) resume() {
	if s.token != "" {
		fmt.Fprintf(s.w, "::%s::\n", s.token)
		s.token = ""
	}
}

// untrusted runs write (which prints text diffusion-check did not write to w) with workflow
// commands stopped when the command runs in GitHub Actions.
func (e env) untrusted(w io.Writer, write func() error) error {
	if !e.github().Actions {
		return write()
	}
	s := &stopCommands{w: untrusted.Raw(w)}
	s.stop()
	defer s.resume()
	return write()
}
