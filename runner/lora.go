package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/results"
	"github.com/diffusion-check/diffusion-check/suite"
)

// The LoRA checks of a case (suite.LoRA), driven as SGLang's harness drives them
// (test_server_common.py, pandalee99/sglang @ cce0a1244): dynamic_load once, after the
// server's warm-up and before the case's requests (_test_dynamic_lora_loading, also in gt
// mode, whose ground truth is written on the loaded adapter); basic_api, dynamic_switch and
// multi_lora after each of the case's requests, in that order, while no other request of the
// case is in flight (the suite refuses concurrency with them), as SGLang's harness runs them
// on every repeated request. Each is a sequence of API calls and generations that stops at
// its first failed step; its verdict is checks.LoRA. A generation's output is compared with
// the case's ground truth where SGLang compares it (_validate_lora_consistency), through the
// validator, and the pictures of a failed comparison join the request's.

// loraNickname is the adapter SGLang's harness loads first and switches back to, and
// loraSecond the second one (the nicknames of test_server_common.py).
const (
	loraNickname = "default"
	loraSecond   = "lora2"
)

// loraRun is one LoRA check in progress after one request: the steps made so far.
type loraRun struct {
	r     *run
	c     *suite.Case
	srv   *server
	at    slot
	m     *measured // the request: its folder, its pictures, whether the server is usable
	name  string
	steps []checks.LoRAStep
	gens  int  // generations so far, which name their folders
	ended bool // a step failed or the run was cancelled: no more steps
}

// dynamicLoRA is the case's lora.dynamic_load check, made once before its requests; nil
// when the case does not ask for it.
func (r *run) dynamicLoRA(ctx context.Context, c *suite.Case, srv *server) *results.Check {
	if c.LoRA == nil || !c.LoRA.DynamicLoad {
		return nil
	}
	lr := &loraRun{r: r, c: c, srv: srv, name: checks.LoRADynamicLoad}
	lr.call(ctx, http.MethodPost, "/v1/set_lora", map[string]any{"lora_nickname": loraNickname, "lora_path": c.LoRA.DynamicPath})
	ck := checks.LoRA(lr.name, lr.steps, ctx.Err() != nil)
	r.logf("%s: %s: %s", c.ID, ck.Name, ck.Status)
	return &ck
}

// loraChecks makes the LoRA checks the case runs after each request on request m (one of the
// case's own, not a confirmation): in gt mode none, as SGLang writes the ground truth and
// stops; after a request the server did not answer, or that left it unusable, each is
// skipped saying why. Their checks join what the server reported of the request.
func (r *run) loraChecks(ctx context.Context, c *suite.Case, srv *server, at slot, m *measured) {
	l := c.LoRA
	if !l.PerRequest() || at.confirm || r.opts.Mode == ModeGT {
		return
	}
	var wanted []string
	for _, w := range []struct {
		on   bool
		name string
	}{{l.BasicAPI, checks.LoRABasicAPI}, {l.DynamicSwitch, checks.LoRADynamicSwitch}, {l.Multi, checks.LoRAMulti}} {
		if w.on {
			wanted = append(wanted, w.name)
		}
	}
	for _, name := range wanted {
		if why := loraBlocked(ctx, m); why != "" {
			m.reported = append(m.reported, checks.Skipped(name, "not run: "+why))
			continue
		}
		lr := &loraRun{r: r, c: c, srv: srv, at: at, m: m, name: name}
		switch name {
		case checks.LoRABasicAPI:
			lr.basicAPI(ctx)
		case checks.LoRADynamicSwitch:
			lr.dynamicSwitch(ctx)
		case checks.LoRAMulti:
			lr.multi(ctx)
		}
		ck := checks.LoRA(name, lr.steps, ctx.Err() != nil)
		m.reported = append(m.reported, ck)
		r.logf("%s %s: %s: %s%s", c.ID, at, name, ck.Status, firstProblem([]results.Check{ck}))
	}
	m.flight.to = time.Now() // the GPU was busy with them: not idle time between requests
}

// loraBlocked says why no LoRA check can run after request m: it got no output, the server
// can no longer be used, or the run was cancelled; "" when they can.
func loraBlocked(ctx context.Context, m *measured) string {
	switch {
	case ctx.Err() != nil:
		return "the run was cancelled"
	case m.halt != "":
		return m.halt
	case !m.answered:
		return "the request got no output (see output.present)"
	}
	return ""
}

// basicAPI is SGLang's _test_lora_api_functionality.
func (lr *loraRun) basicAPI(ctx context.Context) {
	lr.call(ctx, http.MethodPost, "/v1/unmerge_lora_weights", nil)
	lr.generate(ctx, "after unmerge_lora_weights", false)
	lr.call(ctx, http.MethodPost, "/v1/merge_lora_weights", nil)
	lr.generate(ctx, "after merge_lora_weights", true)
	lr.call(ctx, http.MethodPost, "/v1/set_lora", map[string]any{"lora_nickname": loraNickname})
	lr.generate(ctx, "after set_lora", true)
	lr.list(ctx, loraNickname)
}

// dynamicSwitch is SGLang's _test_lora_dynamic_switch_e2e.
func (lr *loraRun) dynamicSwitch(ctx context.Context) {
	lr.generate(ctx, "with the initial LoRA", true)
	lr.call(ctx, http.MethodPost, "/v1/set_lora", map[string]any{"lora_nickname": loraSecond, "lora_path": lr.c.LoRA.SecondPath})
	lr.generate(ctx, "with the second LoRA", false)
	lr.call(ctx, http.MethodPost, "/v1/set_lora", map[string]any{"lora_nickname": loraNickname})
	lr.generate(ctx, "after switching back to the initial LoRA", true)
}

// multi is SGLang's _test_multi_lora_e2e: both adapters at strengths 0.5/0.5, then
// 0.6/0.35, then on separate targets (after a set_lora back to the first, whose answer SGLang
// does not check), then the first alone, whose output is compared with the ground truth.
func (lr *loraRun) multi(ctx context.Context) {
	both := func(target any, strength []float64) map[string]any {
		return map[string]any{"lora_nickname": []string{loraNickname, loraSecond}, "lora_path": []string{lr.c.LoRA.Path, lr.c.LoRA.SecondPath},
			"target": target, "strength": strength}
	}
	lr.call(ctx, http.MethodPost, "/v1/set_lora", both("all", []float64{0.5, 0.5}))
	lr.generate(ctx, "with both adapters", false)
	lr.call(ctx, http.MethodPost, "/v1/set_lora", both("all", []float64{0.6, 0.35}))
	lr.generate(ctx, "with both adapters at other strengths", false)
	if !lr.ended {
		lr.r.answer(ctx, lr.srv, http.MethodPost, "/v1/set_lora", strings.NewReader(`{"lora_nickname": "`+loraNickname+`"}`))
	}
	lr.call(ctx, http.MethodPost, "/v1/set_lora", both([]string{"transformer", "transformer_2"}, []float64{0.6, 0.35}))
	lr.generate(ctx, "with both adapters on separate targets", false)
	lr.call(ctx, http.MethodPost, "/v1/set_lora", map[string]any{"lora_nickname": loraNickname})
	lr.generate(ctx, "with the first adapter alone", true)
}

// step records one step, and ends the check at a failed one. A step the run's cancel cut
// short is not recorded, and ends the check: checks.LoRA calls it cancelled, not failed.
func (lr *loraRun) step(ctx context.Context, s checks.LoRAStep) {
	if ctx.Err() != nil {
		lr.ended = true
		return
	}
	lr.steps = append(lr.steps, s)
	if s.Problem() != "" {
		lr.ended = true
	}
}

// call makes one API call of the check and records it.
func (lr *loraRun) call(ctx context.Context, method, path string, body map[string]any) {
	if lr.ended {
		return
	}
	s := checks.LoRAStep{Call: method + " " + path}
	if body == nil {
		s.Answer = lr.r.answer(ctx, lr.srv, method, path, nil)
		lr.step(ctx, s)
		return
	}
	b, err := json.Marshal(body)
	if err != nil {
		s.Answer = checks.Answer{Err: fmt.Errorf("encode the body: %w", err)}
	} else {
		s.Call += " " + string(b)
		s.Answer = lr.r.answer(ctx, lr.srv, method, path, bytes.NewReader(b))
	}
	lr.step(ctx, s)
}

// list makes the check's GET /v1/list_loras, whose loaded adapters must hold nickname.
func (lr *loraRun) list(ctx context.Context, nickname string) {
	if lr.ended {
		return
	}
	lr.step(ctx, checks.LoRAStep{Call: "GET /v1/list_loras", Answer: lr.r.answer(ctx, lr.srv, http.MethodGet, "/v1/list_loras", nil), Loaded: nickname})
}

// generate sends the case's request once more, into a folder of its own beside the
// request's, and, when compare is set and the case compares with ground truth, checks its
// output and compares it with the ground truth. A server that died or hung meanwhile makes
// the request's server unusable (m.halt), as during the request itself.
func (lr *loraRun) generate(ctx context.Context, after string, compare bool) {
	if lr.ended {
		return
	}
	lr.gens++
	s := checks.LoRAStep{Generation: after}
	dir := filepath.Join(lr.m.dir, fmt.Sprintf("%s-%d", lr.name, lr.gens))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		s.Failed = fmt.Sprintf("its output folder: %v", err)
		lr.step(ctx, s)
		return
	}
	r, c := lr.r, lr.c
	timeout := r.opts.Suite.Servers[c.Server].RequestTimeout
	if c.Timeout > 0 {
		timeout = c.Timeout
	}
	rep, _, timedOut, err := r.send(ctx, c, lr.srv, lr.at, dir, timeout)
	switch {
	case err != nil && ctx.Err() != nil:
		s.Failed = "the run was cancelled" // not recorded (step)
	case err != nil:
		lr.srv.settle(settleTime)
		s.Failed = err.Error()
		if why := lr.srv.dead(); why != "" {
			s.Failed = fmt.Sprintf("%s (%v)", why, err)
			lr.m.halt = fmt.Sprintf("not sent: the server died during the %s check after %s", lr.name, lr.at)
		} else if timedOut {
			s.Failed = fmt.Sprintf("no complete output within the request timeout of %s", timeout)
			lr.m.halt = fmt.Sprintf("not sent: the server was stopped after a generation of the %s check hung", lr.name)
		}
	case compare && suite.Enabled(c.Checks.Consistency):
		lr.compare(ctx, rep, dir, &s)
	}
	lr.step(ctx, s)
}

// compare checks a LoRA generation's output (present, decodable, of the case's shape) and
// compares it with the case's ground truth, as SGLang's _validate_lora_consistency runs
// _validate_consistency on it.
func (lr *loraRun) compare(ctx context.Context, rep reply, dir string, s *checks.LoRAStep) {
	v := lr.r.val
	rr := results.RequestResult{Case: lr.c.ID, Index: lr.at.index, Of: lr.at.of}
	if s.Failed = v.outputProblem(ctx, lr.c, rep, dir, &rr); s.Failed != "" {
		return
	}
	s.Consistency = v.consistency(ctx, lr.c, &rr, dir)
	lr.m.rr.Pictures = append(lr.m.rr.Pictures, rr.Pictures...)
}
