#!/bin/sh
# Remakes docs/comment-failing.png and docs/comment-passing.png from the golden comments
# (go test ./report -update writes them): GFM through marked, drawn at GitHub's comment width
# by headless Chromium. Needs node/npm (the npm registry, once) and chromium
# (Debian: apt-get install chromium fonts-noto-core fonts-noto-color-emoji).
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$repo/docs/report-screenshot.mjs" "$work/"
(cd "$work" && npm install --silent --no-audit --no-fund marked@12 >/dev/null)
shot() { # golden, png, height
	node "$work/report-screenshot.mjs" "$repo/report/testdata/$1" "$work/page.html"
	chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
		--disable-dev-shm-usage --hide-scrollbars --window-size="878,$3" \
		--screenshot="$repo/docs/$2" "file://$work/page.html" 2>/dev/null
}
shot comment-fail.md comment-failing.png 1110
shot comment-pass.md comment-passing.png 520
