package media

import (
	"strings"
	"testing"
)

// FuzzParseProbe checks that no ffprobe output, however mangled, makes ParseProbe panic, and that
// whatever it accepts is a picture with a size and at least one frame.
func FuzzParseProbe(f *testing.F) {
	f.Add(
		[]byte(
			`{"streams":[{"codec_type":"video","codec_name":"h264","width":256,"height":256,"nb_frames":"16","nb_read_frames":"16",` +
				`"avg_frame_rate":"8/1","duration":"2.000000"},` +
				`{"codec_type":"audio","codec_name":"aac","sample_rate":"48000","channels":2,"duration":"2.021333"}],` +
				`"format":{"format_name":"mov,mp4,m4a,3gp,3g2,mj2","duration":"2.021333"}}`,
		),
	)
	f.Add(
		[]byte(
			`{"streams":[{"codec_type":"video","codec_name":"png","width":64,"height":48,"r_frame_rate":"25/1","avg_frame_rate":"25/1","nb_read_frames":"1",` +
				`"disposition":{"attached_pic":0}}],"format":{"format_name":"png_pipe"}}`,
		),
	)
	f.Add([]byte(`{"streams":[{"codec_type":"video","codec_name":"h264","width":64,"height":48,"nb_frames":"16","nb_read_frames":"7"}],"format":{}}`))
	f.Add([]byte(`{"streams":[{"codec_type":"audio","codec_name":"aac"}],"format":{"format_name":"mov"}}`))
	f.Add([]byte(`{"streams":[{"codec_type":"video","width":1,"height":1,"nb_read_frames":"1","avg_frame_rate":"1/0","duration":"NaN"}]}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, data []byte) {
		info, err := ParseProbe(data)
		if err != nil {
			return
		}
		if info.Width <= 0 || info.Height <= 0 || info.Frames <= 0 {
			t.Errorf("accepted %+v", info)
		}
		if !finite(info.FPS) || info.FPS < 0 || !finite(info.DurationS) || info.DurationS < 0 {
			t.Errorf("bad rate or duration in %+v", info)
		}
		if info.Still() && (info.FPS != 0 || info.DurationS != 0) {
			t.Errorf("a still with a frame rate: %+v", info)
		}
	})
}

func TestParseProbe(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     Info
		err      string
	}{
		{
			name: "mp4 with audio",
			in: `{"streams":[{"codec_type":"video","codec_name":"h264","width":256,"height":128,"nb_frames":"16","nb_read_frames":"16",` +
				`"avg_frame_rate":"8/1","duration":"2.000000"},` +
				`{"codec_type":"audio","codec_name":"aac","sample_rate":"48000","channels":2,"duration":"2.021333"}],` +
				`"format":{"format_name":"mov,mp4,m4a,3gp,3g2,mj2","duration":"2.021333"}}`,
			want: Info{Format: "mov,mp4,m4a,3gp,3g2,mj2", Codec: "h264", Width: 256, Height: 128, Frames: 16, FPS: 8, DurationS: 2,
				Audio: &AudioInfo{Codec: "aac", SampleRate: 48000, Channels: 2, DurationS: 2.021333}},
		},
		{
			name: "cover art is skipped",
			in: `{"streams":[{"codec_type":"video","codec_name":"mjpeg","width":10,"height":10,"nb_read_frames":"1","disposition":{"attached_pic":1}},` +
				`{"codec_type":"video","codec_name":"h264","width":20,"height":20,"nb_read_frames":"3","r_frame_rate":"30000/1001"}],` +
				`"format":{"format_name":"mov","duration":"0.1"}}`,
			want: Info{Format: "mov", Codec: "h264", Width: 20, Height: 20, Frames: 3, FPS: 30000.0 / 1001, DurationS: 0.1},
		},
		{
			name: "png",
			in: `{"streams":[{"codec_type":"video","codec_name":"png","width":64,"height":48,"avg_frame_rate":"25/1","nb_read_frames":"1"}],` +
				`"format":{"format_name":"png_pipe"}}`,
			want: Info{Format: "png_pipe", Codec: "png", Width: 64, Height: 48, Frames: 1},
		},
		{name: "truncated", in: `{"streams":[{"codec_type":"video","codec_name":"h264","width":64,"height":48,"nb_frames":"16","nb_read_frames":"7"}]}`,
			err: "truncated or corrupt: the container lists 16 frames, only 7 decode"},
		{name: "nothing decodes", in: `{"streams":[{"codec_type":"video","codec_name":"png","width":64,"height":48}]}`,
			err: "truncated or corrupt: no png frame decodes"},
		{name: "audio only", in: `{"streams":[{"codec_type":"audio","codec_name":"aac"}]}`, err: "no video or image stream"},
		{name: "bad count", in: `{"streams":[{"codec_type":"video","width":64,"height":48,"nb_read_frames":"x"}]}`, err: `nb_read_frames: bad count "x"`},
		{name: "not json", in: `moov atom not found`, err: "reading ffprobe output"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseProbe([]byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Audio != nil && tc.want.Audio != nil && *got.Audio == *tc.want.Audio {
				got.Audio, tc.want.Audio = nil, nil
			}
			if got.Format != tc.want.Format || got.Codec != tc.want.Codec || got.Width != tc.want.Width || got.Height != tc.want.Height ||
				got.Frames != tc.want.Frames || got.FPS != tc.want.FPS || got.DurationS != tc.want.DurationS || (got.Audio == nil) != (tc.want.Audio == nil) {
				t.Errorf("got %+v (audio %+v), want %+v (audio %+v)", got, got.Audio, tc.want, tc.want.Audio)
			}
		})
	}
}
