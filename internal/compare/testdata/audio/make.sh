#!/bin/sh
# Makes the audio pairs of TestAudioMetricsEqualSGLang (internal/compare/audio_sglang_test.go):
#
#   src/TRACK.EXT   the tracks, made by ffmpeg from lavfi sources (AAC in MP4 as SGLang's servers
#                   write it, WAV, stereo, 44.1/48 kHz, quiet, silent, shorter than one frame)
#   raw/TRACK.f32   each track decoded by SGLang's extract_audio_pcm command, verbatim:
#                   ffmpeg -v error -i FILE -map 0:a:0 -vn -ac 1 -ar 16000 -f f32le pipe:1
#   gt/TRACK.wav    a ground truth as SGLang stores it: encode_audio_gt_wav(raw/TRACK.f32), written
#                   with Python's wave module (wav_gt.py, no numpy); sglang_reference.py checks
#                   that SGLang's own encode_audio_gt_wav gives the same bytes
#   pairs.json      the pairs: output track, ground truth (a gt/*.wav, or a media file decoded
#                   like an output: `diffusion-check compare GT.mp4 OUT.mp4`)
#
# sglang_reference.py (numpy, no ffmpeg) then computes SGLang's numbers from raw/ and gt/ into
# sglang_reference.json. Run from anywhere: needs ffmpeg and python3.
set -eu
cd "$(dirname "$0")"
rm -rf src raw gt pairs.json
mkdir -p src raw gt
ffmpeg -version | head -1 >ffmpeg-version.txt

ff() { ffmpeg -hide_banner -loglevel error -nostdin -y "$@"; }
aac() { echo -c:a aac -b:a 128k; }

# track NAME EXT FFMPEG-ARGS...: src/NAME.EXT and raw/NAME.f32.
track() {
	name=$1 ext=$2
	shift 2
	ff "$@" "src/$name.$ext"
	ffmpeg -v error -i "src/$name.$ext" -map 0:a:0 -vn -ac 1 -ar 16000 -f f32le pipe:1 >"raw/$name.f32"
}
sine() { echo "sine=frequency=$1:duration=$2:sample_rate=${3:-48000}"; }

track tone440 wav -f lavfi -i "$(sine 440 1)" -c:a pcm_s16le
track tone440_aac_stereo mp4 -f lavfi -i "$(sine 440 1)" -ac 2 $(aac)
track tone880_aac mp4 -f lavfi -i "$(sine 880 1)" $(aac)
track tone445_aac mp4 -f lavfi -i "$(sine 445 1)" $(aac)
track tone440_long_aac mp4 -f lavfi -i "$(sine 440 1.25)" $(aac)
track tone440_quiet_aac mp4 -f lavfi -i "aevalsrc=0.02*sin(2*PI*440*t):d=1:s=48000" $(aac)
track tone440_noisy_aac mp4 -f lavfi -i "aevalsrc=0.125*sin(2*PI*440*t)+0.05*(random(0)-0.5):d=1:s=48000" $(aac)
track white7 wav -f lavfi -i "anoisesrc=color=white:seed=7:amplitude=0.3:duration=1:sample_rate=16000" -c:a pcm_s16le
track white7_aac mp4 -f lavfi -i "anoisesrc=color=white:seed=7:amplitude=0.3:duration=1:sample_rate=16000" $(aac)
track white8_aac mp4 -f lavfi -i "anoisesrc=color=white:seed=8:amplitude=0.3:duration=1:sample_rate=16000" $(aac)
track pink3 wav -f lavfi -i "anoisesrc=color=pink:seed=3:amplitude=0.4:duration=1:sample_rate=16000" -c:a pcm_s16le
track brown3_aac mp4 -f lavfi -i "anoisesrc=color=brown:seed=3:amplitude=0.4:duration=1:sample_rate=16000" $(aac)
track chirp wav -f lavfi -i "aevalsrc=0.4*sin(2*PI*(200*t+1900*t*t)):d=1:s=44100" -c:a pcm_s16le
track chirp_late_aac mp4 -f lavfi -i "aevalsrc=0.4*sin(2*PI*(200*t+1900*t*t)):d=1:s=44100" -af adelay=6 $(aac)
# Stereo: a different tone on each side; the ground truth is their mono mix.
track stereo_440_660 wav -f lavfi -i "aevalsrc=0.3*sin(2*PI*440*t)|0.3*sin(2*PI*660*t):d=1:s=44100" -c:a pcm_s16le
track mix_440_660 wav -f lavfi -i "aevalsrc=0.15*sin(2*PI*440*t)+0.15*sin(2*PI*660*t):d=1:s=44100" -c:a pcm_s16le
# Above full scale: encode_audio_gt_wav clips it to ±1.
track loud440 wav -f lavfi -i "aevalsrc=1.25*sin(2*PI*440*t):d=1:s=16000" -c:a pcm_f32le
track silent_aac mp4 -f lavfi -i "anullsrc=channel_layout=stereo:sample_rate=48000" -t 1 $(aac)
track hiss wav -f lavfi -i "aevalsrc=1e-5*sin(2*PI*440*t):d=1:s=16000" -c:a pcm_f32le
# Shorter than one 512-sample frame: SGLang pads the spectrogram's input.
track short300 wav -f lavfi -i "$(sine 1000 0.01875 16000)" -c:a pcm_s16le
track short400 wav -f lavfi -i "$(sine 1000 0.025 16000)" -c:a pcm_s16le
# A video with its audio, as a whole-video ground truth and an output.
track av440 mp4 -f lavfi -i "testsrc=size=64x48:rate=8:duration=1" -f lavfi -i "$(sine 440 1)" -c:v libx264 -pix_fmt yuv420p $(aac) -shortest
track av445 mp4 -f lavfi -i "testsrc=size=64x48:rate=8:duration=1" -f lavfi -i "$(sine 445 1)" -c:v libx264 -pix_fmt yuv420p $(aac) -shortest

# pair NAME OUTPUT-TRACK GT: GT is wav:TRACK (gt/TRACK.wav) or media:TRACK (src/TRACK.*).
{
	echo "same tone, AAC stereo output    tone440_aac_stereo wav:tone440"
	echo "440 Hz against 880 Hz           tone880_aac        wav:tone440"
	echo "440 Hz against 445 Hz           tone445_aac        wav:tone440"
	echo "output 0.25 s longer            tone440_long_aac   wav:tone440"
	echo "quiet output                    tone440_quiet_aac  wav:tone440"
	echo "tone with noise                 tone440_noisy_aac  wav:tone440"
	echo "white noise, same seed          white7_aac         wav:white7"
	echo "white noise, other seed         white8_aac         wav:white7"
	echo "brown noise against pink        brown3_aac         wav:pink3"
	echo "chirp 6 ms late                 chirp_late_aac     wav:chirp"
	echo "stereo against its mono mix     stereo_440_660     wav:mix_440_660"
	echo "clipped ground truth            tone440_aac_stereo wav:loud440"
	echo "silent output                   silent_aac         wav:tone440"
	echo "near-silent output              hiss               wav:tone440"
	echo "shorter than one frame          short300           wav:short400"
	echo "whole-video ground truth        av445              media:av440"
} | python3 wav_gt.py
