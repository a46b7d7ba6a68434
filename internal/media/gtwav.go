package media

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/diffusion-check/diffusion-check/internal/inputfile"
)

// SGLang stores the audio ground truth of a video+audio case as {id}_{n}gpu_audio.wav: the
// output's decoded track (DecodeAudio) as 16-bit mono PCM at AudioRate Hz, written by
// encode_audio_gt_wav and read back by decode_audio_gt_wav (test_utils.py, sgl-project/sglang
// main 2026-08-21). EncodeGTWAV and DecodeGTWAV are those two functions.

// ErrGTWAV is wrapped by DecodeGTWAV's errors: the file is not a ground-truth WAV as SGLang
// writes and accepts it.
var ErrGTWAV = errors.New("not an SGLang audio ground truth (16-bit mono PCM WAV at 16000 Hz)")

// gtScale is SGLang's full scale: samples are written as round(x·32767) and read back as
// s/32767 (not 32768).
const gtScale = 32767

// EncodeGTWAV returns samples as SGLang's encode_audio_gt_wav writes them: each clipped to
// [−1, 1], multiplied by 32767 in float32, rounded half to even (np.round) to a signed 16-bit
// integer, in a RIFF/WAVE file of one channel at AudioRate Hz with the 44-byte header Python's
// wave module writes. A NaN or infinite sample is an error (SGLang validates the track first).
func EncodeGTWAV(samples []float32) ([]byte, error) {
	n := 2 * len(samples)
	if n > math.MaxUint32-36 {
		return nil, fmt.Errorf("encode audio ground truth: %d samples do not fit a WAV file", len(samples))
	}
	b := make([]byte, 44, 44+n)
	copy(b[0:], "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+n))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1) // WAVE_FORMAT_PCM
	binary.LittleEndian.PutUint16(b[22:], 1) // channels
	binary.LittleEndian.PutUint32(b[24:], AudioRate)
	binary.LittleEndian.PutUint32(b[28:], 2*AudioRate) // bytes a second
	binary.LittleEndian.PutUint16(b[32:], 2)           // bytes a frame
	binary.LittleEndian.PutUint16(b[34:], 16)          // bits a sample
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(n))
	for i, x := range samples {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, fmt.Errorf("encode audio ground truth: sample %d is %v", i, x)
		}
		x = min(max(x, -1), 1) * gtScale // a float32 product, as numpy's
		b = binary.LittleEndian.AppendUint16(b, uint16(int16(math.RoundToEven(float64(x)))))
	}
	return b, nil
}

// DecodeGTWAV reads a ground-truth WAV as SGLang's decode_audio_gt_wav: it must be PCM with
// one channel, 16 bits a sample, at AudioRate Hz (anything else is an error wrapping ErrGTWAV
// that says what the file is), and sample s becomes s/32767. Chunks other than "fmt " and
// "data" are skipped, as Python's wave module skips them. A data chunk that ends early or in
// the middle of a sample is an error.
func DecodeGTWAV(b []byte) (PCM, error) {
	bad := func(format string, a ...any) (PCM, error) {
		return PCM{}, fmt.Errorf("%w: %s", ErrGTWAV, fmt.Sprintf(format, a...))
	}
	if len(b) < 12 || string(b[0:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return bad("no RIFF/WAVE header")
	}
	var format, channels, bits uint16
	var rate uint32
	haveFmt := false
	for r := b[12:]; ; {
		if len(r) < 8 {
			return bad("no data chunk")
		}
		id, size := string(r[0:4]), uint64(binary.LittleEndian.Uint32(r[4:8]))
		r = r[8:]
		if id == "data" {
			if !haveFmt {
				return bad("data chunk before the fmt chunk")
			}
			if size > uint64(len(r)) {
				return bad("the data chunk holds %d bytes, the file only %d more: truncated", size, len(r))
			}
			if size%2 != 0 {
				return bad("the data chunk ends in the middle of a sample (%d bytes)", size)
			}
			if size/2 > MaxAudioSeconds*AudioRate {
				return bad("longer than %d s (MaxAudioSeconds)", MaxAudioSeconds)
			}
			pcm := PCM{SampleRate: AudioRate, Channels: 1, Samples: make([]float32, size/2)}
			for i := range pcm.Samples {
				pcm.Samples[i] = float32(int16(binary.LittleEndian.Uint16(r[2*i:]))) / gtScale
			}
			return pcm, nil
		}
		if size > uint64(len(r)) {
			return bad("chunk %q holds %d bytes, the file only %d more: truncated", id, size, len(r))
		}
		if id == "fmt " {
			if size < 16 {
				return bad("fmt chunk of %d bytes", size)
			}
			format = binary.LittleEndian.Uint16(r[0:])
			channels = binary.LittleEndian.Uint16(r[2:])
			rate = binary.LittleEndian.Uint32(r[4:])
			bits = binary.LittleEndian.Uint16(r[14:])
			if format == 0xFFFE && size >= 26 { // WAVE_FORMAT_EXTENSIBLE: the sub-format says
				format = binary.LittleEndian.Uint16(r[24:])
			}
			switch {
			case format != 1:
				return bad("format %#x, want PCM (1)", format)
			case channels != 1:
				return bad("%d channels, want mono (decode_audio_gt_wav: Audio GT must be mono)", channels)
			case bits != 16:
				return bad("%d bits a sample, want 16 (Audio GT must use signed 16-bit PCM)", bits)
			case rate != AudioRate:
				return bad("sample rate %d, want %d", rate, AudioRate)
			}
			haveFmt = true
		}
		r = r[min(uint64(len(r)), size+size%2):] // chunks are padded to an even size
	}
}

// ReadGTWAV reads and decodes the ground-truth WAV at path (DecodeGTWAV), naming the file in
// its errors. A file larger than a WAV of MaxAudioSeconds is an error before it is read; a
// link, a FIFO or a device is refused, never read (inputfile.Open).
func ReadGTWAV(ctx context.Context, path string) (PCM, error) {
	f, err := inputfile.Open(ctx, path)
	if err != nil {
		return PCM{}, fmt.Errorf("audio ground truth: %w", err)
	}
	defer f.Close() //nolint:errcheck // opened read-only: nothing written to lose

	const limit = 1<<20 + 2*MaxAudioSeconds*AudioRate // room for other chunks
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return PCM{}, fmt.Errorf("audio ground truth %s: %w", path, err)
	}
	if len(b) > limit {
		return PCM{}, fmt.Errorf("audio ground truth %s: larger than %d bytes (MaxAudioSeconds of 16-bit mono)", path, limit)
	}
	pcm, err := DecodeGTWAV(b)
	if err != nil {
		return PCM{}, fmt.Errorf("audio ground truth %s: %w", path, err)
	}
	return pcm, nil
}
