package refserver

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// TestDynamicBatching: with --batching-max-size 2, two compatible requests sent at once run as
// one batch, logged as SGLang's smoke reads it, and each gets the image it gets alone; requests
// of different sizes are not merged. Under batch-swapped the pair trade images; under
// batch-split-fails both answer 500 with SGLang's message; under batch-unmerged nothing is
// merged.
func TestDynamicBatching(t *testing.T) {
	a := map[string]any{"prompt": "prompt-a", "size": "64x64", "seed": 11, "num_inference_steps": 2, "response_format": "b64_json"}
	b := map[string]any{"prompt": "a longer prompt-b", "size": "64x64", "seed": 22, "num_inference_steps": 2, "response_format": "b64_json"}
	solo := start(t, Config{})
	alone := [2][]byte{solo.image(t, a).media[0], solo.image(t, b).media[0]}

	// A delay far past the test: a pair that is dispatched at once was merged because it was full.
	const delay = 60_000
	t.Run("merged", func(t *testing.T) {
		ts := start(t, Config{BatchingMaxSize: 2, BatchingDelayMs: delay})
		got := pair(t, ts, a, b)
		for i := range got {
			r := decodeImageReply(t, got[i].status, got[i].body)
			if !bytes.Equal(r.media[0], alone[i]) {
				t.Errorf("request %d: its batched image differs from its image alone", i+1)
			}
		}
		for _, want := range []string{"Dynamic batch dispatch: size=2/2, user_max=2", "Processed dynamic batch of 2/2 request(s) with max_delay=60000.00ms"} {
			if !strings.Contains(ts.log.String(), want) {
				t.Errorf("the log lacks %q:\n%s", want, ts.log.String())
			}
		}
	})
	t.Run("swapped", func(t *testing.T) {
		ts := start(t, Config{BatchingMaxSize: 2, BatchingDelayMs: delay, Faults: faults(t, "batch-swapped")})
		got := pair(t, ts, a, b)
		for i := range got {
			if r := decodeImageReply(t, got[i].status, got[i].body); !bytes.Equal(r.media[0], alone[1-i]) {
				t.Errorf("request %d: want the other request's image", i+1)
			}
		}
	})
	t.Run("split fails", func(t *testing.T) {
		ts := start(t, Config{BatchingMaxSize: 2, BatchingDelayMs: delay, Faults: faults(t, "batch-split-fails")})
		for i, r := range pair(t, ts, a, b) {
			if r.status != http.StatusInternalServerError || !strings.Contains(string(r.body), "Dynamic batching failed: could not split merged output.") {
				t.Errorf("request %d: got %d %s, want SGLang's 500", i+1, r.status, r.body)
			}
		}
	})
	for _, tc := range []struct {
		name  string
		specs []string
		b     map[string]any
	}{
		{"unmerged", []string{"batch-unmerged"}, b},
		{"different sizes", nil, map[string]any{"prompt": "b", "size": "32x32", "num_inference_steps": 2, "response_format": "b64_json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := start(t, Config{BatchingMaxSize: 2, BatchingDelayMs: 20, Faults: faults(t, tc.specs...)})
			for _, r := range pair(t, ts, a, tc.b) {
				decodeImageReply(t, r.status, r.body)
			}
			log := ts.log.String()
			solos := strings.Count(log, "Dynamic batch dispatch: size=1/2, user_max=2")
			if strings.Contains(log, "size=2/2") || strings.Contains(log, "Processed dynamic batch") || solos != 2 {
				t.Errorf("want two batches of one, none merged:\n%s", log)
			}
		})
	}
}

type answer struct {
	status int
	body   []byte
}

// pair posts two image requests at once.
func pair(t *testing.T, ts *testServer, a, b map[string]any) (out [2]answer) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, body := range []map[string]any{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			data, _ := json.Marshal(body) //nolint:errchkjson // maps of strings and numbers
			resp, err := ts.Client().Post(ts.URL+"/v1/images/generations", "application/json", bytes.NewReader(data))
			if err != nil {
				errs[i] = err
				return
			}
			defer resp.Body.Close()
			out[i].status = resp.StatusCode
			out[i].body, errs[i] = io.ReadAll(resp.Body)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}
