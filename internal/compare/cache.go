package compare

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/diffusion-check/diffusion-check/internal/media"
)

// DefaultCacheBytes is the memory a Cache may fill with decoded ground truth unless told
// otherwise: 1 GiB, which holds about 770 frames of a 1280×720 yuv420p video (1.5 bytes a
// pixel), 340 of a 1920×1080 one.
const DefaultCacheBytes = 1 << 30

// Cache keeps ground-truth files decoded for the comparisons that follow the first, so that N
// outputs compared with one ground truth decode it once instead of N times. A video is kept as
// its FrameReader receives it (yuv420p planes where the reader converts yuv420p itself, else
// rgb24) and converted frame by frame when compared; an image is kept as rgb24. What would take
// the cache past its cap is not kept: comparisons with that file decode it every time, as
// without a cache.
//
// The first comparison with a video keeps its frames as they stream past, at no extra decode;
// comparisons with the same file that start meanwhile wait for it. A nil *Cache is valid and
// keeps nothing. Drop the cache when its ground truth is no longer needed (the end of a case).
type Cache struct {
	maxBytes int64
	helpers  Helpers

	mu    sync.Mutex // guards used, files and every entry's kept state
	used  int64
	files map[string]*entry
}

// entry is one ground-truth file of a Cache.
type entry struct {
	// lock (one slot) is held by the comparison that decodes the file to keep it; the others
	// wait for it rather than decode the same file at the same time.
	lock chan struct{}
	// What is known about the file, set under Cache.mu: at most one of video and image, or
	// stream when it does not fit.
	video  *keptVideo
	image  *keptImage
	stream bool
	// audio is what is known of the file's audio track.
	audio gtAudio
}

// gtAudio is what a cache knows of a ground truth's audio track.
type gtAudio struct {
	known bool       // rate is known (0: no audio track)
	rate  int        // Hz
	pcm   *media.PCM // the decoded track, when kept
}

// audioState returns what is known of e's audio; nothing for a nil cache.
func (c *Cache) audioState(e *entry) gtAudio {
	if c == nil {
		return gtAudio{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return e.audio
}

// setAudio records what is known of e's audio; a no-op for a nil cache.
func (c *Cache) setAudio(e *entry, a gtAudio) {
	if c == nil {
		return
	}
	c.mu.Lock()
	e.audio = a
	c.mu.Unlock()
}

// keptVideo is a whole decoded video, in the raw form its reader received it.
type keptVideo struct {
	form   media.RawFormat
	w, h   int
	frames [][]byte
}

// keptImage is a decoded still image.
type keptImage struct {
	rgb  []byte
	w, h int
}

// NewCache returns a cache that keeps at most maxBytes of decoded ground truth (0 or less
// keeps nothing) and runs its decoders and metric with h.
func NewCache(maxBytes int64, h Helpers) *Cache {
	return &Cache{maxBytes: maxBytes, helpers: h, files: map[string]*entry{}}
}

// helpersOf is how c runs its decoders and metric; a nil cache's are the zero Helpers.
func (c *Cache) helpersOf() Helpers {
	if c == nil {
		return Helpers{}
	}
	return c.helpers
}

// Bytes returns the memory the cache holds.
func (c *Cache) Bytes() int64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}

// acquire returns path's entry with its lock held; call release when done. It returns nil and
// ctx's error when ctx ends first.
func (c *Cache) acquire(ctx context.Context, path string) (*entry, error) {
	c.mu.Lock()
	e := c.files[path]
	if e == nil {
		e = &entry{lock: make(chan struct{}, 1)}
		c.files[path] = e
	}
	c.mu.Unlock()
	select {
	case e.lock <- struct{}{}:
		return e, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("decode %s: %w", path, ctx.Err())
	}
}

func (e *entry) release() { <-e.lock }

// state returns what is kept of e.
func (c *Cache) state(e *entry) (v *keptVideo, img *keptImage, stream bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return e.video, e.image, e.stream
}

// reserve takes n bytes of the cap; false when they do not fit.
func (c *Cache) reserve(n int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.used+n > c.maxBytes {
		return false
	}
	c.used += n
	return true
}

// unreserve gives back n reserved bytes.
func (c *Cache) unreserve(n int64) {
	c.mu.Lock()
	c.used -= n
	c.mu.Unlock()
}

// fits reports whether n more bytes would fit now.
func (c *Cache) fits(n int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used+n <= c.maxBytes
}

// set records the outcome of decoding e's file.
func (c *Cache) set(e *entry, v *keptVideo, img *keptImage, stream bool) {
	c.mu.Lock()
	e.video, e.image, e.stream = v, img, stream
	c.mu.Unlock()
}

// image returns a still image decoded, from the cache when it was decoded before.
func (c *Cache) image(ctx context.Context, path string) (rgb []byte, w, h int, err error) {
	if c == nil {
		return c.helpersOf().Tools.DecodeImage(ctx, path)
	}
	e, err := c.acquire(ctx, path)
	if err != nil {
		return nil, 0, 0, err
	}
	defer e.release()
	if _, img, _ := c.state(e); img != nil {
		return img.rgb, img.w, img.h, nil
	}
	rgb, w, h, err = c.helpersOf().Tools.DecodeImage(ctx, path)
	if err != nil {
		return nil, 0, 0, err
	}
	if c.reserve(int64(len(rgb))) {
		c.set(e, nil, &keptImage{rgb: rgb, w: w, h: h}, false)
	} else {
		c.set(e, nil, nil, true)
	}
	return rgb, w, h, nil
}

// keeper collects a video's raw frames while they stream past, within the cache's cap.
type keeper struct {
	c      *Cache
	frames [][]byte
	bytes  int64
	over   bool       // the video does not fit: nothing kept
	whole  *keptVideo // set when every frame was kept
	// audioRate is the video's audio sample rate (0: none), from the probe that opened it;
	// audioKnown when it was opened.
	audioRate  int
	audioKnown bool
}

// add keeps a copy of raw (the reader reuses its buffers); past the cap it gives up and frees
// what it held.
func (k *keeper) add(raw []byte) {
	if k == nil || k.over {
		return
	}
	if !k.c.reserve(int64(len(raw))) {
		k.giveUp()
		return
	}
	k.frames = append(k.frames, append([]byte(nil), raw...))
	k.bytes += int64(len(raw))
}

// keeping reports whether k still keeps what it is given.
func (k *keeper) keeping() bool { return k != nil && !k.over }

// take keeps raw itself (the caller gives it up), within the cap; past the cap it gives up.
func (k *keeper) take(raw []byte) {
	if !k.keeping() {
		return
	}
	if !k.c.reserve(int64(len(raw))) {
		k.giveUp()
		return
	}
	k.frames = append(k.frames, raw)
	k.bytes += int64(len(raw))
}

// giveUp frees what was kept and keeps nothing more.
func (k *keeper) giveUp() {
	if k == nil {
		return
	}
	k.c.unreserve(k.bytes)
	k.frames, k.bytes, k.over = nil, 0, true
}

// FrameAt is FrameAt served from the cache when it holds video decoded.
func (c *Cache) FrameAt(ctx context.Context, video string, index int) (rgb []byte, w, h int, err error) {
	if c != nil {
		c.mu.Lock()
		e := c.files[video]
		var v *keptVideo
		if e != nil {
			v = e.video
		}
		c.mu.Unlock()
		if v != nil {
			if index < 0 || index >= len(v.frames) {
				return nil, 0, 0, fmt.Errorf("frame %d of %s: the video has %d frames", index, video, len(v.frames))
			}
			// A copy: the caller owns what it gets, and the kept frame must not change.
			dst := make([]byte, 3*v.w*v.h)
			copy(dst, v.form.RGB(dst, v.frames[index]))
			return dst, v.w, v.h, nil
		}
	}
	return FrameAt(ctx, video, index)
}

// Output decodes the video out once, counting its frames, and returns what it holds as
// media.Probe says it, the frame count being the frames that decode (so no -count_frames
// decode is needed). Its frames are kept, within the cache's cap, for the comparisons of out
// that follow (Videos, KeyFrames, FrameAt), which read them instead of decoding out again;
// Forget drops them. A nil cache keeps nothing: the decode only counts. A file that does not
// decode, or holds fewer frames than its container lists, is an error naming it.
func (c *Cache) Output(ctx context.Context, out string) (media.Info, error) {
	return retryUnproven(func() (media.Info, error) { return c.outputOnce(ctx, out) })
}

// outputOnce is one try of Output.
func (c *Cache) outputOnce(ctx context.Context, out string) (media.Info, error) {
	r, err := c.helpersOf().Tools.OpenFramesWith(ctx, out, c.helpersOf().decodeOptions())
	if err != nil {
		return media.Info{}, err
	}
	defer r.Close()
	form := r.Format()
	var k *keeper
	var e *entry
	if c != nil {
		if e, err = c.acquire(ctx, out); err != nil {
			return media.Info{}, err
		}
		defer e.release()
		k = &keeper{c: c}
		if n := int64(r.Listed()); n > 0 && !c.fits(n*int64(form.Size())) {
			k.over = true
		}
	}
	buf := make([]byte, form.Size())
	for {
		if k.keeping() {
			buf = make([]byte, form.Size()) // kept as it is: no copy
		}
		if err := r.NextRaw(buf); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			k.giveUp()
			return media.Info{}, err
		}
		k.take(buf)
	}
	if k.keeping() {
		w, h := r.Size()
		c.set(e, &keptVideo{form: form, w: w, h: h, frames: k.frames}, nil, false)
	}
	return r.Info(), nil
}

// OutputAudio decodes the audio track of out once (media.DecodeAudioTrack; channels is its
// channel count, from Output's Info) and keeps it, within the cache's cap, for the Audio
// comparison of out that follows (and a later OutputAudio of out); Forget drops it.
func (c *Cache) OutputAudio(ctx context.Context, out string, channels int) (media.PCM, error) {
	if kept := c.keptAudio(out); kept != nil {
		return *kept, nil
	}
	pcm, err := c.helpersOf().Tools.DecodeAudioTrack(ctx, out, channels)
	if err != nil || c == nil {
		return pcm, err
	}
	e, err := c.acquire(ctx, out)
	if err != nil {
		return media.PCM{}, err
	}
	defer e.release()
	if a := c.audioState(e); a.pcm == nil && c.reserve(4*int64(len(pcm.Samples))) {
		c.setAudio(e, gtAudio{known: true, rate: pcm.SampleRate, pcm: &pcm})
	}
	return pcm, nil
}

// Forget drops what the cache holds of path (an output once compared), freeing its share of
// the cap. It waits for a decode of path in progress.
func (c *Cache) Forget(path string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	e := c.files[path]
	c.mu.Unlock()
	if e == nil {
		return
	}
	e.lock <- struct{}{}
	defer e.release()
	c.mu.Lock()
	defer c.mu.Unlock()
	var n int64
	if e.video != nil {
		for _, f := range e.video.frames {
			n += int64(len(f))
		}
	}
	if e.image != nil {
		n += int64(len(e.image.rgb))
	}
	if e.audio.pcm != nil {
		n += 4 * int64(len(e.audio.pcm.Samples))
	}
	c.used -= n
	e.video, e.image, e.audio = nil, nil, gtAudio{}
	if c.files[path] == e {
		delete(c.files, path)
	}
}

// keptVideo returns the frames kept of path, nil when none are.
func (c *Cache) keptVideo(path string) *keptVideo {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.files[path]; e != nil {
		return e.video
	}
	return nil
}

// keptAudio returns the audio track kept of path, nil when none is.
func (c *Cache) keptAudio(path string) *media.PCM {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.files[path]; e != nil {
		return e.audio.pcm
	}
	return nil
}
