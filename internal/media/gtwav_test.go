package media

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/internal/media/mediatest"
	"github.com/google/go-cmp/cmp"
)

// TestDecodeAudioIsExtractAudioPCM: DecodeAudio gives the samples of SGLang's extract_audio_pcm
// command (test_utils.py, copied here verbatim), bit for bit, for a stereo WAV at 44.1 kHz
// (ffmpeg's down-mix, not an average) and a stereo AAC track in an MP4.
func TestDecodeAudioIsExtractAudioPCM(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	dir := t.TempDir()
	mk := func(name string, args ...string) string {
		p := filepath.Join(dir, name)
		cmd := exec.CommandContext(t.Context(), "ffmpeg", append(append([]string{"-hide_banner", "-loglevel", "error", "-nostdin", "-y"}, args...), p)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("ffmpeg %v: %v\n%s", args, err, out)
		}
		return p
	}
	for _, p := range []string{
		mk("stereo.wav", "-f", "lavfi", "-i", "aevalsrc=0.3*sin(2*PI*440*t)|0.2*sin(2*PI*660*t):d=0.5:s=44100", "-c:a", "pcm_s16le"),
		mk("aac.mp4", "-f", "lavfi", "-i", "sine=frequency=440:duration=0.5:sample_rate=48000", "-ac", "2", "-c:a", "aac"),
	} {
		t.Run(filepath.Base(p), func(t *testing.T) {
			// extract_audio_pcm's argument list.
			want, err := exec.CommandContext(t.Context(), "ffmpeg", "-v", "error", "-i", p, "-map", "0:a:0", "-vn",
				"-ac", "1", "-ar", "16000", "-f", "f32le", "pipe:1").Output()
			if err != nil {
				t.Fatal(err)
			}
			pcm, err := OnPath().DecodeAudio(t.Context(), p)
			if err != nil {
				t.Fatal(err)
			}
			var got []byte
			for _, v := range pcm.Samples {
				got = binary.LittleEndian.AppendUint32(got, math.Float32bits(v))
			}
			if !bytes.Equal(got, want) {
				t.Errorf("DecodeAudio gave %d bytes, extract_audio_pcm's command %d, and they differ", len(got), len(want))
			}
		})
	}
}

// TestEncodeGTWAV: SGLang's encode_audio_gt_wav writes round(clip(x, −1, 1)·32767) (half to
// even) after the 44-byte header of Python's wave module. Internal/compare's
// TestAudioMetricsEqualSGLang shows the same bytes as SGLang's own function on whole tracks.
func TestEncodeGTWAV(t *testing.T) {
	b, err := EncodeGTWAV([]float32{0, 1, -1, 1.5, -2, 0.5, 1.5 / gtScale, 2.5 / gtScale, -0.5 / gtScale})
	if err != nil {
		t.Fatal(err)
	}
	header := "RIFF" + "\x36\x00\x00\x00" + "WAVEfmt " + "\x10\x00\x00\x00" + "\x01\x00" + "\x01\x00" +
		"\x80\x3e\x00\x00" + "\x00\x7d\x00\x00" + "\x02\x00" + "\x10\x00" + "data" + "\x12\x00\x00\x00"
	if got := string(b[:44]); got != header {
		t.Errorf("header %q, want %q", got, header)
	}
	var got []int16
	for i := 44; i+1 < len(b); i += 2 {
		got = append(got, int16(binary.LittleEndian.Uint16(b[i:])))
	}
	// 0.5·32767 = 16383.5 → 16384 (even); 1.5 → 2, 2.5 → 2, −0.5 → −0.
	if d := cmp.Diff([]int16{0, 32767, -32767, 32767, -32767, 16384, 2, 2, 0}, got); d != "" {
		t.Errorf("samples (-want +got):\n%s", d)
	}
	if _, err := EncodeGTWAV([]float32{0, float32(math.NaN())}); err == nil {
		t.Error("NaN sample: no error")
	}
}

// TestDecodeGTWAV: what decode_audio_gt_wav accepts is read back as s/32767; what it rejects
// (not mono, not 16-bit, not 16 kHz, not PCM) is an error wrapping ErrGTWAV that says why.
func TestDecodeGTWAV(t *testing.T) {
	good, err := EncodeGTWAV([]float32{0.25, -1, 1})
	if err != nil {
		t.Fatal(err)
	}
	pcm, err := DecodeGTWAV(good)
	if err != nil {
		t.Fatal(err)
	}
	want := PCM{SampleRate: AudioRate, Channels: 1, Samples: []float32{8192.0 / 32767, -1, 1}}
	if d := cmp.Diff(want, pcm); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	// A LIST chunk before fmt and data is skipped, as Python's wave skips it.
	withList := append([]byte{}, good[:12]...)
	withList = append(withList, "LIST\x03\x00\x00\x00abc\x00"...)
	withList = append(withList, good[12:]...)
	if p, err := DecodeGTWAV(withList); err != nil || len(p.Samples) != 3 {
		t.Errorf("with a LIST chunk: %d samples, error %v", len(p.Samples), err)
	}
	set := func(off int, v uint32, size int) []byte {
		b := bytes.Clone(good)
		if size == 2 {
			binary.LittleEndian.PutUint16(b[off:], uint16(v))
		} else {
			binary.LittleEndian.PutUint32(b[off:], v)
		}
		return b
	}
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"stereo", set(22, 2, 2), "2 channels, want mono"},
		{"8-bit", set(34, 8, 2), "8 bits a sample"},
		{"48 kHz", set(24, 48000, 4), "sample rate 48000, want 16000"},
		{"IEEE float", set(20, 3, 2), "format 0x3, want PCM"},
		{"truncated", good[:len(good)-2], "truncated"},
		{"half a sample", set(40, 5, 4), "middle of a sample"},
		{"no data chunk", good[:36], "no data chunk"},
		{"not RIFF", []byte("ID3\x04 an MP3 file"), "no RIFF/WAVE header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeGTWAV(tc.b)
			if !errors.Is(err, ErrGTWAV) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want ErrGTWAV saying %q", err, tc.want)
			}
		})
	}
}

func TestReadGTWAVNamesTheFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x_1gpu_audio.wav")
	if err := os.WriteFile(p, []byte("RIFF"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadGTWAV(t.Context(), p); !errors.Is(err, ErrGTWAV) || !strings.Contains(err.Error(), p) {
		t.Errorf("error %v, want ErrGTWAV naming %s", err, p)
	}
}

func FuzzDecodeGTWAV(f *testing.F) {
	good, _ := EncodeGTWAV([]float32{0.5, -0.5})
	f.Add(good)
	f.Add(good[:40])
	f.Add([]byte("RIFF\x00\x00\x00\x00WAVEdata\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := DecodeGTWAV(b)
		if err == nil && (p.SampleRate != AudioRate || p.Channels != 1) {
			t.Errorf("accepted %+v", p)
		}
		for _, v := range p.Samples {
			if v < -1.0001 || v > 1 {
				t.Fatalf("sample %g out of range", v)
			}
		}
	})
}
