package main

import (
	"encoding/json"
	"fmt"

	"github.com/sethvargo/go-githubactions"

	"github.com/diffusion-check/diffusion-check/internal/untrusted"
)

// action is the GitHub Actions toolkit bound to this command's environment and stdout.
func (e env) action() *githubactions.Action {
	return githubactions.New(githubactions.WithGetenv(e.getenv), githubactions.WithWriter(untrusted.Raw(e.stdout)))
}

// setOutputs sets step outputs (strings as they are, anything else as compact JSON) when the
// command runs in a workflow step. The toolkit panics when the GITHUB_OUTPUT file cannot be
// written; that becomes an error here.
func (e env) setOutputs(outs map[string]any) (err error) {
	if e.github().Output == "" {
		return nil
	}
	a := e.action()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("write step outputs to $GITHUB_OUTPUT: %v", r)
		}
	}()
	for k, v := range outs {
		s, ok := v.(string)
		if !ok {
			b, err := json.Marshal(v)
			if err != nil {
				return fmt.Errorf("step output %s: %w", k, err)
			}
			s = string(b)
		}
		a.SetOutput(k, s)
	}
	return nil
}
