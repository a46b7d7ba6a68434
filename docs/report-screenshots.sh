#!/bin/sh
# Remakes the screenshots of docs/screenshots/ from the golden comments (go test ./report
# -update writes them): GFM through marked, drawn at GitHub's comment width (860 px) by
# headless Chromium, with the <details> closed as a reviewer first sees them and, for the
# failing run, opened as one who clicked them does. Needs node/npm (the npm registry, once)
# and chromium (Debian: apt-get install chromium fonts-noto-core fonts-noto-color-emoji).
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd)
out="$repo/docs/screenshots"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
cp "$repo/docs/report-screenshot.mjs" "$work/"
(cd "$work" && npm install --silent --no-audit --no-fund marked@12 >/dev/null)
chrome() {
	chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
		--disable-dev-shm-usage --hide-scrollbars "$@" 2>/dev/null
}
shot() { # golden, png, [open]
	node "$work/report-screenshot.mjs" "$repo/report/testdata/$1" "$work/page.html" "${3:-}"
	# The page writes its height into its title; the window is made that tall.
	h=$(chrome --window-size=878,600 --dump-dom "file://$work/page.html" | sed -n 's:.*<title>\([0-9]*\)</title>.*:\1:p')
	chrome --window-size="878,$((${h:-1200} + 16))" --screenshot="$out/$2" "file://$work/page.html"
}
shot comment-fail.md comment-failing.png
shot comment-fail.md comment-failing-open.png open
shot comment-pass.md comment-passing.png
