#!/usr/bin/env bash
# Times `diffusion-check compare` (every frame: RGB SSIM + PSNR + MAD, decode included) against
# `ffmpeg -i out.mp4 -i gt.mp4 -lavfi ssim -f null -` (luma-weighted SSIM) on 97-frame 1280x720
# H.264 videos, all pinned to the same cores, and prints, for each vector SSIM kernel
# (DIFFUSION_CHECK_KERNEL=avx512 and avx2, those this CPU has), two ratios of medians:
#   (a) one pair:      time(compare GT OUT) / time(ffmpeg ssim)                  goal <= 1.3 (2 cores), 0.9 (16)
#   (b) three outputs: time(compare GT O1 O2 O3) / 3 / time(ffmpeg ssim)         goal <= 0.8 (2 cores), 0.5 (16)
# (b) is what a case with several requests costs per request: the ground truth is decoded once.
# And the start-up cost, on two 64x64 PNGs (decoded in Go; ffmpeg and ffprobe are probed once
# and the probe kept in the user's cache, media.CachedProbe):
#   (c) small pair:    time(compare A.png B.png) / time(ffmpeg -i A.png -i B.png -lavfi ssim)   goal <= 1.2
# The same ffmpeg on PATH runs both sides; FFmpeg 4.x works (the floor passes -vsync where the
# build has no -fps_mode, as compare does).
# The commands are alternated (ffmpeg, then each kernel's one and three), RUNS times each; wall
# time is the measure of the goals, CPU time (user+sys of the process and its children) is
# printed beside it because it is steadier on a shared machine. The load average is printed
# before and after: on a loaded machine the wall times say little.
# It also times the decode floor (floor.sh below: the probes and the decodes into pipes, without
# the metric) and prints its two ratios: no change to compare can go below them.
# The same measure as a Go benchmark (with pprof): BenchmarkCompareVsFFmpeg in internal/compare.
#
# usage: bench/compare.sh [RUNS]        (default 7; run from anywhere)
#   DIFFUSION_CHECK=path  use this binary instead of building one
#   GOEXPERIMENT=...      the build's experiments (default simd: the vector kernels)
#   BENCH_DIR=dir         keep the videos there (default: a temporary folder)
#   BENCH_CPUS=list       the cores to pin to (taskset -c; default the first two, 0,1; 0-15 for 16)
#   BENCH_KERNELS=list    the kernels to time (default: avx512 avx2, those the CPU has)
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
cpus=${BENCH_CPUS:-0,1}
pin=()
if command -v taskset >/dev/null; then
	pin=(taskset -c "$cpus")
else
	echo "warning: no taskset: not pinned to cores $cpus" >&2
fi

# Inputs, deterministic (fixed sources, seeds and encoder settings; x264 is deterministic):
# the ground truth is ffmpeg's testsrc2 pattern (moving, detailed); each output is the same with
# a slight brightness/contrast change and light temporal noise, as a drifting model would give.
q=(-hide_banner -nostdin -loglevel error -y)
enc=(-c:v libx264 -preset veryfast -crf 18 -pix_fmt yuv420p)
[[ -s $dir/gt.mp4 ]] || ffmpeg "${q[@]}" -f lavfi -i testsrc2=size=1280x720:rate=24 -frames:v 97 "${enc[@]}" "$dir/gt.mp4"
outs=()
for k in 1 2 3; do
	o=$dir/out$k.mp4
	[[ -s $o ]] || ffmpeg "${q[@]}" -i "$dir/gt.mp4" \
		-vf "eq=brightness=0.0$((k + 1)):contrast=1.0$((k + 2)),noise=alls=3:allf=t:all_seed=$k" "${enc[@]}" "$o"
	outs+=("$o")
done

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# timed NAME CMD...: runs CMD pinned, appending its wall and CPU seconds to $dir/NAME.wall/.cpu.
timed() {
	local name=$1 t
	shift
	t=$( { TIMEFORMAT='%R %U %S'; time "${pin[@]}" "$@" >/dev/null; } 2>&1 | tail -1)
	awk -v t="$t" 'BEGIN {split(t, a, " "); print a[1]}' >>"$dir/$name.wall"
	awk -v t="$t" 'BEGIN {split(t, a, " "); print a[2] + a[3]}' >>"$dir/$name.cpu"
}
# threads N: the ffmpeg threads each of N decoders gets, as compare's decoders get them without
# a thread budget: the pinned cores shared among the files, at least one each (one on two
# cores, four each of four files on sixteen).
pinned=$("${pin[@]}" nproc)
threads() {
	local t=$((pinned / $1))
	echo $((t >= 1 ? t : 1))
}
# The decode floor: what compare cannot do without, and nothing else. For each file at once, the
# ffprobe run that gives its header and an ffmpeg decoding it to yuv420p into a pipe (as a
# yuv4mpeg stream, as compare reads it), read by cat; no conversion, no metric; each decoder
# with the threads its first argument says. Its ratios to ffmpeg ssim bound what compare can
# reach with ffmpeg and ffprobe as subprocesses.
# The passthrough option of this ffmpeg, as compare chooses it (media.Tools.Passthrough):
# -fps_mode from FFmpeg 5.1, -vsync before it.
if ffmpeg -hide_banner -h long 2>/dev/null | grep -q '^-fps_mode'; then
	passthrough=-fps_mode
else
	passthrough=-vsync
fi
cat >"$dir/floor.sh" <<FLOOR
#!/usr/bin/env bash
th=\$1
shift
for f; do
	ffprobe -v error -show_entries stream=codec_type,codec_name,width,height,nb_frames,pix_fmt,color_space,color_range,sample_rate,channels,avg_frame_rate,r_frame_rate,duration:stream_disposition=attached_pic:stream_side_data_list:format=format_name,duration -of json "\$f" >/dev/null &
	ffmpeg -hide_banner -nostdin -loglevel error -threads "\$th" -i "\$f" -map 0:V:0 $passthrough passthrough -f yuv4mpegpipe -pix_fmt yuv420p pipe:1 | cat >/dev/null &
done
wait
FLOOR
chmod +x "$dir/floor.sh"
# What decoding inside the process would cost instead (one process, no probe, no pipe): one
# ffmpeg decoding every file, with the floor's threads each (the first argument), to nothing.
cat >"$dir/inproc.sh" <<'INPROC'
#!/usr/bin/env bash
args=() maps=() i=0
th=$1
shift
for f; do
	args+=(-threads "$th" -i "$f")
	maps+=(-map "$i:V:0" -f null -)
	i=$((i + 1))
done
exec ffmpeg -hide_banner -nostdin -loglevel error "${args[@]}" "${maps[@]}"
INPROC
chmod +x "$dir/inproc.sh"
# Two small images: what a command's start costs against ffmpeg's.
[[ -s $dir/a.png ]] || ffmpeg "${q[@]}" -f lavfi -i testsrc2=size=64x64 -frames:v 1 "$dir/a.png"
[[ -s $dir/b.png ]] || ffmpeg "${q[@]}" -i "$dir/a.png" -vf eq=brightness=0.03 "$dir/b.png"
rm -f "$dir"/*.wall "$dir"/*.cpu
kernels=()
for k in ${BENCH_KERNELS:-avx512 avx2}; do
	if DIFFUSION_CHECK_KERNEL=$k "$bin" version >/dev/null 2>&1; then
		kernels+=("$k")
	else
		echo "kernel $k: not on this CPU or build, skipped" >&2
	fi
done
((${#kernels[@]} > 0)) || { echo "no vector kernel to time" >&2; exit 1; }
load0=$(cut -d' ' -f1-3 /proc/loadavg)
# Warm the page cache (and the probe cache) and check that the commands work.
"$bin" compare --json "$dir/gt.mp4" "${outs[@]}" >"$dir/compare.json"
"$bin" compare --json "$dir/a.png" "$dir/b.png" >/dev/null
for ((i = 0; i < runs; i++)); do
	timed ffmpeg ffmpeg -hide_banner -nostdin -loglevel error -i "${outs[0]}" -i "$dir/gt.mp4" -lavfi ssim -f null -
	timed small-ffmpeg ffmpeg -hide_banner -nostdin -loglevel error -i "$dir/b.png" -i "$dir/a.png" -lavfi ssim -f null -
	timed small-compare "$bin" compare --json "$dir/a.png" "$dir/b.png"
	timed floor-one "$dir/floor.sh" "$(threads 2)" "$dir/gt.mp4" "${outs[0]}"
	timed floor-three "$dir/floor.sh" "$(threads 4)" "$dir/gt.mp4" "${outs[@]}"
	timed inproc-one "$dir/inproc.sh" "$(threads 2)" "$dir/gt.mp4" "${outs[0]}"
	timed inproc-three "$dir/inproc.sh" "$(threads 4)" "$dir/gt.mp4" "${outs[@]}"
	for k in "${kernels[@]}"; do
		timed "one-$k" env DIFFUSION_CHECK_KERNEL="$k" "$bin" compare --json "$dir/gt.mp4" "${outs[0]}"
		timed "three-$k" env DIFFUSION_CHECK_KERNEL="$k" "$bin" compare --json "$dir/gt.mp4" "${outs[@]}"
	done
done
m() { median <"$dir/$1"; }
ratio() { awk "BEGIN {printf \"%.2f\", $1 / $2}"; }
frames=$(grep -o '"frames": [0-9]*' "$dir/compare.json" | head -1 | grep -o '[0-9]*$')
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), pinned to cores $cpus; load before $load0, after $(cut -d' ' -f1-3 /proc/loadavg)"
"$bin" version | sed 's/^/version: /'
echo "binary: $(go version -m "$bin" 2>/dev/null | grep -o 'GOEXPERIMENT=[^ ]*' || echo 'GOEXPERIMENT unset')"
echo "videos: $frames frames 1280x720 H.264; $runs runs of each command, alternating"
echo "ffmpeg: $(command -v ffmpeg), $(ffmpeg -hide_banner -version | head -1) (floor passthrough option $passthrough)"
for n in ffmpeg small-ffmpeg small-compare floor-one floor-three inproc-one inproc-three "${kernels[@]/#/one-}" "${kernels[@]/#/three-}"; do
	printf '%-13s wall %s\n              cpu  %s\n' "$n" "$(paste -sd' ' "$dir/$n.wall")" "$(paste -sd' ' "$dir/$n.cpu")"
done
printf 'ffmpeg ssim: median wall %.3f s, cpu %.3f s\n' "$(m ffmpeg.wall)" "$(m ffmpeg.cpu)"
printf '(c) small pair (two 64x64 PNGs): compare wall %.3f s, ffmpeg ssim %.3f s: ratio %s wall (goal <= 1.2), %s cpu\n' \
	"$(m small-compare.wall)" "$(m small-ffmpeg.wall)" "$(ratio "$(m small-compare.wall)" "$(m small-ffmpeg.wall)")" \
	"$(ratio "$(m small-compare.cpu)" "$(m small-ffmpeg.cpu)")"
printf 'decode floor (probes + decodes into pipes, no metric): one pair wall %.3f s, cpu %.3f s; three outputs wall %.3f s, cpu %.3f s\n' \
	"$(m floor-one.wall)" "$(m floor-one.cpu)" "$(m floor-three.wall)" "$(m floor-three.cpu)"
printf 'floor (a) one pair:      ratio %s wall, %s cpu\n' \
	"$(ratio "$(m floor-one.wall)" "$(m ffmpeg.wall)")" "$(ratio "$(m floor-one.cpu)" "$(m ffmpeg.cpu)")"
printf 'floor (b) three outputs: ratio %s wall per output, %s cpu\n' \
	"$(ratio "$(m floor-three.wall)" "$(awk "BEGIN {print 3 * $(m ffmpeg.wall)}")")" \
	"$(ratio "$(m floor-three.cpu)" "$(awk "BEGIN {print 3 * $(m ffmpeg.cpu)}")")"
printf 'decodes in one process (no probe, no pipe, no metric): one pair wall %.3f s, cpu %.3f s; three outputs wall %.3f s, cpu %.3f s\n' \
	"$(m inproc-one.wall)" "$(m inproc-one.cpu)" "$(m inproc-three.wall)" "$(m inproc-three.cpu)"
for k in "${kernels[@]}"; do
	printf '%s: compare GT OUT median wall %.3f s, cpu %.3f s; compare GT O1 O2 O3 wall %.3f s, cpu %.3f s\n' "$k" \
		"$(m "one-$k.wall")" "$(m "one-$k.cpu")" "$(m "three-$k.wall")" "$(m "three-$k.cpu")"
	printf '%s (a) one pair:      ratio %s wall (goal <= 1.3 on 2 cores, 0.9 on 16), %s cpu\n' "$k" \
		"$(ratio "$(m "one-$k.wall")" "$(m ffmpeg.wall)")" "$(ratio "$(m "one-$k.cpu")" "$(m ffmpeg.cpu)")"
	printf '%s (b) three outputs: ratio %s wall per output (goal <= 0.8 on 2 cores, 0.5 on 16), %s cpu\n' "$k" \
		"$(ratio "$(m "three-$k.wall")" "$(awk "BEGIN {print 3 * $(m ffmpeg.wall)}")")" \
		"$(ratio "$(m "three-$k.cpu")" "$(awk "BEGIN {print 3 * $(m ffmpeg.cpu)}")")"
done
