#!/bin/sh
# A deterministic quality scorer for tests, speaking diffusion-check's quality protocol:
# stdin {"metric":NAME,"pairs":[{"prompt":TEXT,"image":PATH},...]}, stdout {"scores":[...]}.
# Every image of a metric scores $QUALITY_SCORER_<METRIC> (upper case), by default
# clip_score 30, clip_iqa 0.6, image_reward 0.5 (SGLang's healthy images score about so).
# QUALITY_SCORER_MODE=fail exits 1 as a scorer whose model is missing does; =null answers null.
set -eu
in=$(cat)
[ "${QUALITY_SCORER_MODE:-}" = fail ] && { echo "ImageReward cannot share this interpreter" >&2; exit 1; }
metric=$(printf '%s' "$in" | sed -n 's/.*"metric": *"\([a-z_]*\)".*/\1/p')
case "$metric" in
clip_score) s=${QUALITY_SCORER_CLIP_SCORE:-30} ;;
clip_iqa) s=${QUALITY_SCORER_CLIP_IQA:-0.6} ;;
image_reward) s=${QUALITY_SCORER_IMAGE_REWARD:-0.5} ;;
*) echo "unknown metric: $metric" >&2; exit 2 ;;
esac
[ "${QUALITY_SCORER_MODE:-}" = null ] && s=null
n=$(printf '%s' "$in" | tr '{' '\n' | grep -c '"image"' || true)
scores=""
i=0
while [ "$i" -lt "$n" ]; do
	scores="${scores:+$scores,}$s"
	i=$((i + 1))
done
printf '{"scores":[%s]}\n' "$scores"
