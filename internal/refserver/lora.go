package refserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// SGLang's LoRA API (entrypoints/openai/common_api.py: set_lora, merge_lora_weights,
// unmerge_lora_weights, list_loras; pipelines_core/lora/pipeline.py: LoRAPipeline.set_lora,
// get_lora_status; pandalee99/sglang @ cce0a1244). The reference model has no weights: an
// adapter is a nickname and a path, and what is applied marks every output's pixel values
// with a mask of its own (loras.mark), so that an output shows which adapters made it: the
// ground truth written in one state compares with the outputs of the same state only.

// loraTargets are SGLang's LoRAPipeline.VALID_TARGETS.
var loraTargets = []string{"all", "transformer", "transformer_2", "critic"}

// loras is the server's LoRA state: the adapters loaded (nickname → path, in load order)
// and those applied, merged or not.
type loras struct {
	mu     sync.Mutex
	paths  map[string]string
	order  []string
	active []appliedLoRA
	merged bool
	marks  map[string]byte // each state applied so far → its mask (mark)
}

// appliedLoRA is one adapter applied to a target at a strength.
type appliedLoRA struct {
	nickname, path, target string
	strength               float64
}

// newLoras is the state of a server started with --lora-path path: SGLang loads it as the
// adapter "default" and merges it (ServerArgs.lora_path); none without one.
func newLoras(path string) *loras {
	l := &loras{paths: map[string]string{}, marks: map[string]byte{}}
	if path != "" {
		l.paths["default"], l.order = path, []string{"default"}
		l.active, l.merged = []appliedLoRA{{nickname: "default", path: path, target: "all", strength: 1}}, true
	}
	return l
}

// mark is the mask the applied adapters XOR every output's pixel values with: 0 for the
// base model (none applied, or unmerged), else one of the masks 32·k (k from 1 to 7), given
// to each state (the adapters, targets and strengths applied) in the order it first
// generates, so that two states of a server differ by 32 levels or more in every pixel (up
// to seven states; an eighth takes the first's mask again). A server started the same way and
// sent the same calls marks the same states alike: the ground truth of one run compares with
// the next.
func (l *loras) mark() byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.merged || len(l.active) == 0 {
		return 0
	}
	var sig strings.Builder
	for _, a := range l.active {
		fmt.Fprintf(&sig, "%s\x00%s\x00%s\x00%g\x00", a.nickname, a.path, a.target, a.strength)
	}
	m, ok := l.marks[sig.String()]
	if !ok {
		m = byte(len(l.marks)%7+1) << 5
		l.marks[sig.String()] = m
	}
	return m
}

// markPixels XORs the colour channels of packed pixels (bpp bytes each) with mask.
func markPixels(pix []byte, bpp int, mask byte) {
	if mask == 0 {
		return
	}
	for i := 0; i+2 < len(pix); i += bpp {
		pix[i] ^= mask
		pix[i+1] ^= mask
		pix[i+2] ^= mask
	}
}

// setLoRARequest is the body of POST /v1/set_lora: each field a value or a list of them.
type setLoRARequest struct {
	Nickname json.RawMessage `json:"lora_nickname"`
	Path     json.RawMessage `json:"lora_path"`
	Target   json.RawMessage `json:"target"`
	Strength json.RawMessage `json:"strength"`
}

// oneOrMany reads a JSON value that is a T or a list of T; absent or null is none.
func oneOrMany[T any](raw json.RawMessage) (vals []T, list bool, err error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, false, nil
	}
	if strings.HasPrefix(strings.TrimSpace(string(raw)), "[") {
		err = json.Unmarshal(raw, &vals)
		return vals, true, err
	}
	var v T
	err = json.Unmarshal(raw, &v)
	return []T{v}, false, err
}

// setLoRA is POST /v1/set_lora: it loads the adapters whose path it is given, applies the
// named ones and merges them, as LoRAPipeline.set_lora does. An adapter named without a path
// that is not loaded, lists of other lengths than lora_nickname's or an unknown target fail
// with SGLang's 500 "Failed to set LoRA adapter: ..."; no lora_nickname is FastAPI's 422. The
// lora-set-fails fault fails every call; lora-switch-sticks leaves the applied adapters as
// they were when the call names only adapters already loaded.
func (h *Handler) setLoRA(w http.ResponseWriter, r *http.Request) {
	var req setLoRARequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
		writeError(w, http.StatusUnprocessableEntity, "invalid JSON body: "+err.Error())
		return
	}
	apply, err := h.parseSetLoRA(req)
	if err == nil && h.cfg.Faults.LoRASetFails {
		err = errors.New("injected fault lora-set-fails")
	}
	if err != nil {
		var missing missingField
		if errors.As(err, &missing) {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": []map[string]any{{
				"type": "missing", "loc": []string{"body", string(missing)}, "msg": "Field required", "input": nil}}})
			return
		}
		writeError(w, http.StatusInternalServerError, "Failed to set LoRA adapter: "+err.Error())
		return
	}
	l := h.loras
	l.mu.Lock()
	onlyLoaded := true
	for _, a := range apply {
		if a.loadPath != "" && l.paths[a.nickname] != a.loadPath {
			onlyLoaded = false
			if _, ok := l.paths[a.nickname]; !ok {
				l.order = append(l.order, a.nickname)
			}
			l.paths[a.nickname] = a.loadPath
		}
	}
	if !(h.cfg.Faults.LoRASwitchSticks && onlyLoaded) {
		l.active = l.active[:0]
		for _, a := range apply {
			l.active = append(l.active, appliedLoRA{nickname: a.nickname, path: l.paths[a.nickname], target: a.target, strength: a.strength})
		}
		l.merged = true
	}
	l.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "message": fmt.Sprintf("Successfully set LoRA adapter(s): %s (target: %s, strength: %s)",
		joinField(apply, func(a loraCall) string { return a.nickname }), joinField(apply, func(a loraCall) string { return a.target }),
		joinField(apply, func(a loraCall) string { return strconv.FormatFloat(a.strength, 'f', 2, 64) }))})
}

// loraCall is one adapter of a set_lora call: its path to load ("" to use the loaded one),
// target and strength.
type loraCall struct {
	nickname, loadPath, target string
	strength                   float64
}

// missingField is a required body field that was not sent (FastAPI's 422 "missing").
type missingField string

func (m missingField) Error() string { return "missing " + string(m) }

// parseSetLoRA reads a set_lora body as LoRAPipeline._normalize_lora_params does: a single
// target or strength applies to every adapter, a list must match the nicknames' length.
func (h *Handler) parseSetLoRA(req setLoRARequest) ([]loraCall, error) {
	names, _, err := oneOrMany[string](req.Nickname)
	if err != nil {
		return nil, fmt.Errorf("lora_nickname: %w", err)
	}
	if len(names) == 0 {
		return nil, missingField("lora_nickname")
	}
	paths, pathList, err := oneOrMany[*string](req.Path)
	if err != nil {
		return nil, fmt.Errorf("lora_path: %w", err)
	}
	targets, _, err := oneOrMany[string](req.Target)
	if err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	strengths, _, err := oneOrMany[float64](req.Strength)
	if err != nil {
		return nil, fmt.Errorf("strength: %w", err)
	}
	if pathList && len(paths) != len(names) {
		return nil, fmt.Errorf("lora_path has %d entries, lora_nickname %d", len(paths), len(names))
	}
	// at is the entry of a list of n values that adapter i takes: its own, or the one value
	// that applies to every adapter.
	at := func(field string, n, i int) (int, error) {
		switch n {
		case len(names):
			return i, nil
		case 1:
			return 0, nil
		}
		return 0, fmt.Errorf("%s has %d entries, lora_nickname %d", field, n, len(names))
	}
	calls := make([]loraCall, len(names))
	h.loras.mu.Lock()
	defer h.loras.mu.Unlock()
	for i, n := range names {
		c := loraCall{nickname: n, target: "all", strength: 1}
		if i < len(paths) && paths[i] != nil {
			c.loadPath = *paths[i]
		}
		if len(targets) > 0 {
			k, err := at("target", len(targets), i)
			if err != nil {
				return nil, err
			}
			c.target = targets[k]
		}
		if len(strengths) > 0 {
			k, err := at("strength", len(strengths), i)
			if err != nil {
				return nil, err
			}
			c.strength = strengths[k]
		}
		if !slices.Contains(loraTargets, c.target) {
			//nolint:revive,staticcheck // SGLang's message, word for word
			return nil, fmt.Errorf("Invalid target(s): ['%s']. Valid targets: %v", c.target, loraTargets)
		}
		if _, loaded := h.loras.paths[n]; !loaded && c.loadPath == "" {
			//nolint:revive,staticcheck // SGLang's message, word for word
			return nil, fmt.Errorf("Adapter %s not found in the pipeline. Please provide lora_path to load it.", n)
		}
		calls[i] = c
	}
	return calls, nil
}

// joinField joins one field of each call with ", ", as SGLang's format_lora_message.
func joinField(calls []loraCall, f func(loraCall) string) string {
	var out []string
	for _, c := range calls {
		out = append(out, f(c))
	}
	return strings.Join(out, ", ")
}

// lorasBody reads the optional target and strength of a merge or unmerge call.
type lorasBody struct {
	Target   *string  `json:"target"`
	Strength *float64 `json:"strength"`
}

// mergeLoRA is POST /v1/merge_lora_weights (merge) and POST /v1/unmerge_lora_weights (not
// merge): the applied adapters are merged again, or the base model's weights restored with
// the adapters still loaded and applied (LoRAPipeline.merge_lora_weights,
// unmerge_lora_weights), answered with SGLang's message; the lora-merge-fails and
// lora-unmerge-fails faults answer SGLang's 500.
func (h *Handler) mergeLoRA(merge bool) http.HandlerFunc {
	verb, failed := "merge", h.cfg.Faults.LoRAMergeFails
	if !merge {
		verb, failed = "unmerge", h.cfg.Faults.LoRAUnmergeFails
	}
	return func(w http.ResponseWriter, r *http.Request) {
		b, ok := readLoRABody(w, r)
		if !ok {
			return
		}
		if failed {
			writeError(w, http.StatusInternalServerError, fmt.Sprintf("Failed to %s LoRA weights: injected fault lora-%s-fails", verb, verb))
			return
		}
		h.loras.mu.Lock()
		h.loras.merged = merge
		h.loras.mu.Unlock()
		target := "all"
		if b.Target != nil {
			target = *b.Target
		}
		msg := fmt.Sprintf("Successfully %sd LoRA weights (target: %s", verb, target)
		if merge {
			strength := 1.0
			if b.Strength != nil {
				strength = *b.Strength
			}
			msg += ", strength: " + strconv.FormatFloat(strength, 'f', -1, 64)
		}
		writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "message": msg + ")"})
	}
}

// readLoRABody reads a merge or unmerge body; none is every default, as FastAPI's Body
// fields with defaults.
func readLoRABody(w http.ResponseWriter, r *http.Request) (lorasBody, bool) {
	var b lorasBody
	if r.ContentLength == 0 {
		return b, true
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&b); err != nil && !errors.Is(err, io.EOF) {
		writeError(w, http.StatusUnprocessableEntity, "invalid JSON body: "+err.Error())
		return b, false
	}
	return b, true
}

// listLoRAs is GET /v1/list_loras: LoRAPipeline.get_lora_status, the adapters loaded
// ({nickname, path}) and, for the transformer when an adapter is applied, what is applied;
// the lora-list-empty fault lists none.
func (h *Handler) listLoRAs(w http.ResponseWriter, _ *http.Request) {
	l := h.loras
	l.mu.Lock()
	loaded := []map[string]any{}
	for _, n := range l.order {
		loaded = append(loaded, map[string]any{"nickname": n, "path": l.paths[n]})
	}
	active := map[string]any{}
	if len(l.active) > 0 {
		names := make([]string, len(l.active))
		for i, a := range l.active {
			names[i] = a.nickname
		}
		mode := "unmerged"
		if l.merged {
			mode = "merged"
		}
		active["transformer"] = []map[string]any{{"nickname": strings.Join(names, ","), "path": l.active[0].path, "merged": l.merged,
			"mode": mode, "strength": l.active[0].strength}}
	}
	l.mu.Unlock()
	if h.cfg.Faults.LoRAListEmpty {
		loaded, active = []map[string]any{}, map[string]any{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"loaded_adapters": loaded, "active": active})
}
