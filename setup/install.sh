#!/usr/bin/env bash
# The setup action's installer (setup/action.yml): installs the diffusion-check release binary
# for this runner's OS and architecture, verified against the release's checksums.txt, into the
# runner's tool cache, puts it on PATH and checks ffmpeg and ffprobe with `diffusion-check doctor`.
#
# A bash script, not a Go program: it must run before any diffusion-check binary is on the
# machine, on hosts and job containers that need not have Go, and bash with curl (or wget),
# sha256sum (or shasum) and tar is on every runner image and in SGLang's images.
#
# Inputs (environment; the action maps its inputs onto them):
#   INPUT_VERSION       release tag, vX.Y.Z[-pre]
#   INPUT_BASE_URL      assets are at $INPUT_BASE_URL/$INPUT_VERSION/<asset>; default DEFAULT_BASE_URL
#   INPUT_CHECK_FFMPEG  "true": run `diffusion-check doctor` and fail when ffmpeg is unsupported
# and the runner's RUNNER_OS, RUNNER_ARCH, RUNNER_TOOL_CACHE, RUNNER_TEMP, GITHUB_PATH and
# GITHUB_OUTPUT (https://docs.github.com/en/actions/reference/workflows-and-actions/variables).
#
# The tool cache layout is @actions/tool-cache's: $RUNNER_TOOL_CACHE/<tool>/<version>/<arch>/,
# complete once <arch>.complete exists beside it; a re-run finds it there and downloads nothing.
# The release assets are .goreleaser.yaml's: diffusion-check_<version without v>_<os>_<arch>.tar.gz
# and checksums.txt (SHA-256).
set -euo pipefail

fail() { echo "::error title=diffusion-check setup::$*" >&2; exit 1; }

version=${INPUT_VERSION:-}
[[ $version =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] ||
  fail "version '$version': want a release tag vX.Y.Z (diffusion-check's releases: docs/releasing.md)"
base=${INPUT_BASE_URL:-${DEFAULT_BASE_URL:-}}
[ -n "$base" ] || fail "no base_url, and no DEFAULT_BASE_URL: where are the releases?"
base=${base%/}
[ -n "${RUNNER_TOOL_CACHE:-}" ] || fail "RUNNER_TOOL_CACHE is not set: run this on a GitHub Actions runner (or set it)"

case "${RUNNER_OS:-$(uname -s)}" in
  Linux | linux) os=linux ;;
  macOS | Darwin) os=darwin ;;
  *) fail "runner OS ${RUNNER_OS:-$(uname -s)}: diffusion-check releases binaries for Linux (amd64, arm64) and macOS (arm64)" ;;
esac
case "${RUNNER_ARCH:-$(uname -m)}" in
  X64 | x86_64 | amd64) arch=amd64 ;;
  ARM64 | aarch64 | arm64) arch=arm64 ;;
  *) fail "runner architecture ${RUNNER_ARCH:-$(uname -m)}: diffusion-check releases amd64 and arm64 binaries" ;;
esac
[ "$os/$arch" != darwin/amd64 ] || fail "macOS on amd64: diffusion-check releases a macOS binary for arm64 only"

asset="diffusion-check_${version#v}_${os}_${arch}.tar.gz"
dir="$RUNNER_TOOL_CACHE/diffusion-check/${version#v}/$arch"
marker="$dir.complete"
cache_hit=false
if [ -f "$marker" ] && [ -x "$dir/diffusion-check" ]; then
  cache_hit=true
  echo "diffusion-check $version: found in the tool cache ($dir)"
else
  tmp=$(mktemp -d "${RUNNER_TEMP:-/tmp}/diffusion-check-setup.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  fetch() { # fetch URL FILE: fails on an HTTP error (404 for a missing asset)
    if command -v curl >/dev/null; then
      curl -fsSL --retry 3 --retry-connrefused -o "$2" "$1"
    elif command -v wget >/dev/null; then
      wget -q --tries=3 -O "$2" "$1"
    else
      fail "neither curl nor wget is installed: install one (apt-get install -y curl)"
    fi
  }
  fetch "$base/$version/checksums.txt" "$tmp/checksums.txt" ||
    fail "release $version: could not download checksums.txt from $base/$version/ (no such release?)"
  fetch "$base/$version/$asset" "$tmp/$asset" ||
    fail "release $version has no asset $asset at $base/$version/ (no binary for $os/$arch in this release?)"
  want=$(awk -v f="$asset" '$2 == f || $2 == "*" f { print $1; exit }' "$tmp/checksums.txt")
  [ -n "$want" ] || fail "release $version: checksums.txt lists no $asset; refusing an unverified binary"
  if command -v sha256sum >/dev/null; then
    got=$(sha256sum "$tmp/$asset" | awk '{ print $1 }')
  elif command -v shasum >/dev/null; then
    got=$(shasum -a 256 "$tmp/$asset" | awk '{ print $1 }')
  else
    fail "neither sha256sum nor shasum is installed: cannot verify the download"
  fi
  [ "$got" = "$want" ] ||
    fail "checksum mismatch for $asset of $version: SHA-256 $got, checksums.txt says $want; the download is refused"
  mkdir -p "$tmp/x"
  tar -xzf "$tmp/$asset" -C "$tmp/x" diffusion-check ||
    fail "$asset: no diffusion-check binary in the archive"
  # A complete cache entry appears at once: the folder is renamed into place, then marked.
  rm -rf "$dir" "$marker"
  mkdir -p "$(dirname "$dir")"
  mkdir "$tmp/entry" && mv "$tmp/x/diffusion-check" "$tmp/entry/diffusion-check"
  chmod 755 "$tmp/entry/diffusion-check"
  mv "$tmp/entry" "$dir"
  touch "$marker"
  echo "diffusion-check $version: installed $asset (SHA-256 $got verified) into $dir"
fi

echo "$dir" >>"${GITHUB_PATH:-/dev/null}"
{
  echo "version=$version"
  echo "path=$dir/diffusion-check"
  echo "cache_hit=$cache_hit"
} >>"${GITHUB_OUTPUT:-/dev/null}"

"$dir/diffusion-check" version
if [ "${INPUT_CHECK_FFMPEG:-true}" = true ]; then
  if ! "$dir/diffusion-check" doctor; then
    fail "ffmpeg and ffprobe (FFmpeg 4.1 or newer) are needed by run, compare and serve. Install them before this step: Debian/Ubuntu (and SGLang's images): apt-get update && apt-get install -y ffmpeg; RHEL: dnf install ffmpeg (RPM Fusion); macOS: brew install ffmpeg. docs/ffmpeg.md lists the versions tested."
  fi
fi
