package runner

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"path/filepath"
	"sync"
	"time"

	"github.com/diffusion-check/diffusion-check/internal/clock"
	"github.com/diffusion-check/diffusion-check/internal/fetch"
	"github.com/diffusion-check/diffusion-check/internal/inputfile"
	"github.com/diffusion-check/diffusion-check/suite"
)

// inputRetries are the waits before the fetches of an input URL that follow a failed one:
// SGLang's harness tries a download up to 4 times, 1, 2 and 4 s apart (test_server_utils.py
// _urlopen_with_retry, pandalee99/sglang @ cce0a1244), an HTTP error included.
var inputRetries = []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}

// inputs reads what a case sends as a file (an image to edit, an input_reference): a file,
// read as untrusted input, or an http(s) URL, which SGLang's harness downloads before it sends
// the request (download_image_from_url). A URL's body is fetched once per run and kept for the
// later requests, so that the GPU does not wait for the network between two requests; a fetch
// that failed is tried again by the next request.
type inputs struct {
	hc  *http.Client
	mu  sync.Mutex
	got map[string][]byte
	// logf tells that a URL was fetched (nil: nothing is told).
	logf func(format string, args ...any)
}

// read returns the bytes of ref and the file name they are sent under. A nil *inputs reads
// files and fetches URLs without keeping them.
func (in *inputs) read(ctx context.Context, ref string) ([]byte, string, error) {
	if !suite.IsURL(ref) {
		data, err := inputfile.Read(ctx, ref, maxInputBytes)
		return data, filepath.Base(ref), err
	}
	name := "input"
	if u, err := url.Parse(ref); err == nil && path.Base(u.Path) != "/" && path.Base(u.Path) != "." {
		name = path.Base(u.Path)
	}
	if in != nil {
		in.mu.Lock()
		data, ok := in.got[ref]
		in.mu.Unlock()
		if ok {
			return data, name, nil
		}
	}
	var hc *http.Client
	if in != nil {
		hc = in.hc
	}
	data, err := fetchInput(ctx, hc, ref)
	if err != nil {
		return nil, "", fmt.Errorf("input %w", err)
	}
	if in != nil {
		in.mu.Lock()
		if in.got == nil {
			in.got = map[string][]byte{}
		}
		in.got[ref] = data
		in.mu.Unlock()
		if in.logf != nil {
			in.logf("fetched the input %s (%d bytes); the run's later requests send the same bytes", fetch.Redact(ref), len(data))
		}
	}
	return data, name, nil
}

// fetchInput fetches an input URL with the limits of a first frame, trying again after the
// waits of inputRetries; a body over the cap is not tried again.
func fetchInput(ctx context.Context, hc *http.Client, ref string) ([]byte, error) {
	var tooLarge *fetch.TooLargeError
	for attempt := 0; ; attempt++ {
		b, err := fetch.Get(ctx, hc, ref, firstFrameLimits)
		if err == nil {
			return b.Data, nil
		}
		if attempt == len(inputRetries) || errors.As(err, &tooLarge) || ctx.Err() != nil {
			if attempt > 0 {
				return nil, fmt.Errorf("%w (after %d tries)", err, attempt+1)
			}
			return nil, err
		}
		if err := clock.Sleep(ctx, inputRetries[attempt]); err != nil {
			return nil, err
		}
	}
}
