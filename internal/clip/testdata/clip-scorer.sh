#!/bin/sh
# A deterministic CLIP scorer for tests, speaking diffusion-check's scorer protocol:
# stdin {"pairs":[{"output":PATH,"ground_truth":PATH},...]}, stdout {"scores":[...]}.
# A pair scores 1 when the two files have the same bytes and 0.5 otherwise.
# CLIP_SCORER_MODE changes its behaviour: "short" answers one score too few, "null" answers
# null for every pair, "garbage" answers something that is not the protocol, "fail" exits 1,
# "sleep" never answers in time.
set -eu
in=$(cat)
case "${CLIP_SCORER_MODE:-}" in
fail) echo "model not found: openai/clip-vit-large-patch14" >&2; exit 1 ;;
sleep) sleep 30 ;;
garbage) echo "Loading model..."; exit 0 ;;
esac
# One "output":"...","ground_truth":"..." pair a line (paths without quotes or commas).
pairs=$(printf '%s' "$in" | tr '{' '\n' | grep '"output"' || true)
scores=""
n=0
IFS='
'
for line in $pairs; do
	out=$(printf '%s' "$line" | sed -n 's/.*"output": *"\([^"]*\)".*/\1/p')
	gt=$(printf '%s' "$line" | sed -n 's/.*"ground_truth": *"\([^"]*\)".*/\1/p')
	s=0.5
	if cmp -s "$out" "$gt"; then s=1; fi
	[ "${CLIP_SCORER_MODE:-}" = null ] && s=null
	n=$((n + 1))
	if [ "${CLIP_SCORER_MODE:-}" = short ] && [ "$n" -eq 1 ]; then continue; fi
	scores="${scores:+$scores,}$s"
done
printf '{"scores":[%s]}\n' "$scores"
