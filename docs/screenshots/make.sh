#!/bin/sh
# Remakes the screenshots of this folder: a failing comment with its inline worst-frame
# picture (details closed, then opened) and the check run's summary on the Checks tab, at
# GitHub's comment width (860 px). The Markdown is what publish_pictures_checks.txtar posts to
# the fake GitHub, kept by
#   go test ./cmd/diffusion-check -run TestScripts/publish_pictures_checks -testwork -v
# (copy $WORK/comment-pictures.md, $WORK/checkrun.md and the run's
# drift/artifacts/t2i_fox/request-2/consistency-frame-0.png and consistency-repeat-frame-0.png
# here as comment-pictures.md, checkrun-summary.md, worst-frame.png and repeat-frame.png). The
# pictures stand in for their URLs on the pictures branch, which the screenshot cannot reach. Needs what ../report-screenshots.sh needs.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here/../report-screenshot.mjs" "$work/"
(cd "$work" && npm install --silent --no-audit --no-fund marked@12 >/dev/null)
shot() { # markdown, png, height, options...
	md=$1 png=$2 h=$3
	shift 3
	node "$work/report-screenshot.mjs" "$here/$md" "$work/page.html" "$@" --picture "$here/worst-frame.png" --picture-repeat "$here/repeat-frame.png"
	chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
		--disable-dev-shm-usage --hide-scrollbars --allow-file-access-from-files --window-size="878,$h" \
		--screenshot="$here/$png" "file://$work/page.html" 2>/dev/null
}
shot comment-pictures.md comment-pictures-closed.png 1000
shot comment-pictures.md comment-pictures-open.png 1900 open
# The annotation is the one the script's check run holds (github checkrun … annotations=drift.yaml:7).
shot checkrun-summary.md checkrun-summary.png 1000 --check "1 of 2 requests failed: t2i_fox/2" \
	--annotation "drift.yaml:7|diffusion-check: case t2i_fox request 2/2 fail|consistency.ssim = 0.812135, limit 0.95: SSIM 0.8121 (limit ≥ 0.95); consistency.psnr = 15.8792 dB, limit 28 dB: PSNR 15.8792 (limit ≥ 28); consistency.mean_abs_diff = 32.8487, limit 8: mean abs diff 32.8487 (limit ≤ 8)"
