#!/usr/bin/env bash
# Temporary experiment (not committed): compare GT O1 O2 O3 (the CLI) on 16 cores under layout knobs, with traces.
set -uo pipefail
cd "$(dirname "$0")/.."
kit=.gpu-check
mkdir -p $kit/bin
unxz() { python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$1" "$2"; chmod +x "$2"; }
for f in ffmpeg ffprobe; do [[ -x $kit/bin/$f ]] || unxz $kit/pack/$f.xz $kit/bin/$f; done
unxz $kit/exp/dcx.xz $kit/bin/dcx
export PATH=$PWD/$kit/bin:$PATH
out=${OUT:-/tmp/exp2}; mkdir -p "$out"
d=$kit/bench
[[ -s $d/out3.mp4 && -x $d/floor.sh ]] || BENCH_DIR=$PWD/$d BENCH_CPUS=0-15 DIFFUSION_CHECK=$PWD/$kit/bin/dcx BENCH_KERNELS=avx512 bench/compare.sh 1 >"$out/bench-once.txt" 2>&1
pin=(taskset -c ${PIN:-0-15})
timed() { local name=$1; shift; local t; t=$( { TIMEFORMAT='%R %U %S'; time "${pin[@]}" "$@" >/dev/null 2>&1; } 2>&1 | tail -1); echo "$name $t" >>"$out/times.txt"; }
cat >$d/dec.sh <<'D'
#!/usr/bin/env bash
th=$1; shift
for f; do ffmpeg -hide_banner -nostdin -loglevel error -threads $th -i "$f" -map 0:V:0 -vsync passthrough -f rawvideo -pix_fmt yuv420p pipe:1 | cat >/dev/null & done; wait
D
chmod +x $d/dec.sh
three=($d/gt.mp4 $d/out1.mp4 $d/out2.mp4 $d/out3.mp4)
dcx compare --json "${three[@]}" >/dev/null
variants=("A" "D2 DCX_DECODE=2" "D3 DCX_DECODE=3" "G6D3 DCX_GTDECODE=6 DCX_DECODE=3" "G8D2 DCX_GTDECODE=8 DCX_DECODE=2" "G6D2 DCX_GTDECODE=6 DCX_DECODE=2" "G4D3 DCX_GTDECODE=4 DCX_DECODE=3" "D3N5 DCX_DECODE=3 DCX_NICE=5")
for t in 1 2 3 4; do echo "== floor $t threads" >>"$out/trace.txt"; for r in 1 2 3; do { TIMEFORMAT='%R %U %S'; time "${pin[@]}" $d/dec.sh $t "${three[@]}"; } 2>>"$out/trace.txt"; done; done
for r in $(seq ${RUNS:-7}); do
	timed ffmpeg ffmpeg -hide_banner -nostdin -loglevel error -i $d/out1.mp4 -i $d/gt.mp4 -lavfi ssim -f null -
	timed floor3 $d/floor.sh "${three[@]}"
	for v in "${variants[@]}"; do
		set -- $v; n=$1; shift
		timed "three-$n" env "$@" dcx compare --json "${three[@]}"
	done
done
for v in "A" "D2 DCX_DECODE=2" "G6D3 DCX_GTDECODE=6 DCX_DECODE=3"; do set -- $v; n=$1; shift; for r in 1 2 3; do echo "== $n $r" >>"$out/trace.txt"; env DCX_TRACE=1 "$@" "${pin[@]}" dcx compare --json "${three[@]}" 2>>"$out/trace.txt" >/dev/null; done; done
for r in 1 2 3; do echo "== ffprobe alone $r" >>"$out/trace.txt"; { TIMEFORMAT='%R %U %S'; time "${pin[@]}" ffprobe -v error -show_entries stream=codec_type,width,height -of json $d/gt.mp4 >/dev/null; } 2>>"$out/trace.txt"; done
python3 - "$out/times.txt" <<'P' | tee "$out/summary.txt"
import sys, statistics, collections
w=collections.defaultdict(list); c=collections.defaultdict(list)
for line in open(sys.argv[1]):
    n, r, u, s = line.split(); w[n].append(float(r)); c[n].append(float(u)+float(s))
a=statistics.median(w["ffmpeg"])
for n in w:
    mw, mc = statistics.median(w[n]), statistics.median(c[n])
    per = 1 if n == "ffmpeg" else 3
    print(f"{n:12s} wall {mw:.3f} cpu {mc:.3f} ratio/out {mw/per/a:.3f}  walls {' '.join(f'{x:.3f}' for x in sorted(w[n]))}")
P
