#!/usr/bin/env bash
# Times `diffusion-check compare` (all frames, RGB SSIM+PSNR+MAD, decode included) against
# `ffmpeg -i out.mp4 -i gt.mp4 -lavfi ssim -f null -` (luma-weighted SSIM) on the same
# 97-frame 1280x720 H.264 pair, alternating the two, and prints both medians and the ratio.
#
# usage: bench/compare.sh [RUNS]        (default 7; run from anywhere)
#   DIFFUSION_CHECK=path  use this binary instead of building one
#   GOEXPERIMENT=...      the build's experiments (default simd: the AVX-512 SSIM kernel; set
#                         GOEXPERIMENT=nosimd or none to time the portable kernel)
#   BENCH_DIR=dir         keep the videos there (default: a temporary folder)
set -euo pipefail
runs=${1:-7}
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${BENCH_DIR:-$(mktemp -d)}
mkdir -p "$dir"
[[ -n ${BENCH_DIR:-} ]] || trap 'rm -rf "$dir"' EXIT
bin=${DIFFUSION_CHECK:-}
if [[ -z $bin ]]; then
	bin=$dir/diffusion-check
	(cd "$root" && GOEXPERIMENT=${GOEXPERIMENT:-simd} CGO_ENABLED=1 CGO_CFLAGS=-Wno-deprecated-declarations go build -o "$bin" ./cmd/diffusion-check)
fi
q=(-hide_banner -nostdin -loglevel error -y)
# Ground truth: ffmpeg's testsrc2 pattern (moving, detailed). Output: the same with a slight
# brightness/contrast change and light temporal noise, as a drifting model would produce.
if [[ ! -s $dir/gt.mp4 || ! -s $dir/out.mp4 ]]; then
	ffmpeg "${q[@]}" -f lavfi -i testsrc2=size=1280x720:rate=24 -frames:v 97 \
		-c:v libx264 -preset veryfast -crf 18 -pix_fmt yuv420p "$dir/gt.mp4"
	ffmpeg "${q[@]}" -i "$dir/gt.mp4" -vf eq=brightness=0.02:contrast=1.03,noise=alls=3:allf=t \
		-c:v libx264 -preset veryfast -crf 18 -pix_fmt yuv420p "$dir/out.mp4"
fi

now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
ours=() theirs=()
load0=$(cut -d' ' -f1-3 /proc/loadavg)
"$bin" compare --json "$dir/gt.mp4" "$dir/out.mp4" >"$dir/compare.json" # warm the page cache
for ((i = 0; i < runs; i++)); do
	t0=$(now)
	"$bin" compare --json "$dir/gt.mp4" "$dir/out.mp4" >/dev/null
	t1=$(now)
	ffmpeg -hide_banner -nostdin -loglevel error -i "$dir/out.mp4" -i "$dir/gt.mp4" -lavfi ssim -f null -
	t2=$(now)
	ours+=("$(awk "BEGIN {printf \"%.3f\", $t1 - $t0}")")
	theirs+=("$(awk "BEGIN {printf \"%.3f\", $t2 - $t1}")")
done
mo=$(printf '%s\n' "${ours[@]}" | median)
mt=$(printf '%s\n' "${theirs[@]}" | median)
frames=$(grep -o '"frames": [0-9]*' "$dir/compare.json" | grep -o '[0-9]*$')
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load before $load0, after $(cut -d' ' -f1-3 /proc/loadavg)"
echo "binary: $(go version -m "$bin" 2>/dev/null | grep -o 'GOEXPERIMENT=[^ ]*' || echo 'GOEXPERIMENT unset (portable kernel)')"
echo "pair: $frames frames 1280x720 H.264; runs: $runs each, alternating"
echo "diffusion-check compare: runs ${ours[*]}"
echo "ffmpeg -lavfi ssim:      runs ${theirs[*]}"
printf 'median: diffusion-check %.3f s, ffmpeg ssim %.3f s, ratio %.2f (target <= 1.0)\n' "$mo" "$mt" "$(awk "BEGIN {print $mo / $mt}")"
