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
#   INPUT_BASE_URL      assets are at $INPUT_BASE_URL/$INPUT_VERSION/<asset>; default the releases
#                       of the action's own repository on $GITHUB_SERVER_URL
#   INPUT_CHECK_FFMPEG  "true": run `diffusion-check doctor` and fail when ffmpeg is unsupported
#   INPUT_VERIFY        auto (default), attestation or checksum: how the archive is verified
#                       beyond its SHA-256 (below)
#   INPUT_TOKEN         the token `gh attestation verify` reads the attestations with (GH_TOKEN)
#   ATTESTATION_REPO    owner/name whose release workflow attested the archive; default the
#                       action's own repository (below)
# and the runner's RUNNER_OS, RUNNER_ARCH, RUNNER_TOOL_CACHE, RUNNER_TEMP, GITHUB_PATH and
# GITHUB_OUTPUT (https://docs.github.com/en/actions/reference/workflows-and-actions/variables).
#
# The tool cache layout is @actions/tool-cache's: $RUNNER_TOOL_CACHE/<tool>/<version>/<arch>/,
# complete once <arch>.complete exists beside it. The entry keeps the release archive beside the
# binary; a re-run verifies both against the release's checksums.txt (fetched every time: the
# tool cache is writable by every job of the runner's user) and downloads the archive only when
# they do not match.
# The release assets are .goreleaser.yaml's: diffusion-check_<version without v>_<os>_<arch>.tar.gz
# and checksums.txt (SHA-256).
#
# The SHA-256 an archive must have comes from the action's own folder when its checksums.txt
# lists the asset ($GITHUB_ACTION_PATH/checksums.txt, which the release workflow commits into
# the tagged release commit: a SHA pin of the action then pins the binary's bits), else from the
# release's checksums.txt. Then, with verify auto, `gh attestation verify` checks the archive
# against the release workflow's signed provenance when gh and a token are there (else the
# SHA-256 alone, and the log says so); attestation requires it; checksum skips it.
set -euo pipefail

fail() { echo "::error title=diffusion-check setup::$*" >&2; exit 1; }

version=${INPUT_VERSION:-}
[[ $version =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] ||
  fail "version '$version': want a release tag vX.Y.Z (diffusion-check's releases: docs/releasing.md)"
# The action's own repository, from the folder the runner checked it out into
# (.../_actions/<owner>/<repo>/<ref>/setup): github.action_repository is not reliable inside a
# composite action (actions/runner#2473 for its sibling action_ref). A fork's users get the
# fork's releases and attestations; a local `uses: ./setup` has none, so diffusion-check's.
repo_of_action=diffusion-check/diffusion-check
if [[ ${GITHUB_ACTION_PATH:-} =~ /_actions/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)/[^/]+/setup/?$ ]]; then
  repo_of_action=${BASH_REMATCH[1]}/${BASH_REMATCH[2]}
fi
base=${INPUT_BASE_URL:-}
if [ -z "$base" ] && [ -n "${GITHUB_SERVER_URL:-}" ]; then
  base=$GITHUB_SERVER_URL/$repo_of_action/releases/download
fi
base=${base:-${DEFAULT_BASE_URL:-}}
[ -n "$base" ] || fail "no base_url and no GITHUB_SERVER_URL: where are the releases? Set the base_url input"
base=${base%/}
[ -n "${RUNNER_TOOL_CACHE:-}" ] || fail "RUNNER_TOOL_CACHE is not set: run this on a GitHub Actions runner (or set it)"
verify=${INPUT_VERIFY:-auto}
case "$verify" in
  auto | attestation | checksum) ;;
  *) fail "verify '$verify': want auto, attestation or checksum" ;;
esac
repo=${ATTESTATION_REPO:-$repo_of_action}

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

# The Linux binaries are linked against glibc 2.34 or newer (cgo, for NVML; built on Ubuntu
# 22.04): on musl or an older glibc they would die with a loader error, so say so first.
# SETUP_LIBC ("musl", "glibc 2.31") stands in for the detection in the installer's tests.
if [ "$os" = linux ]; then
  libc=${SETUP_LIBC:-}
  if [ -z "$libc" ]; then
    if compgen -G '/lib/ld-musl-*' >/dev/null; then
      libc=musl
    else
      libc=$(getconf GNU_LIBC_VERSION 2>/dev/null || true)
    fi
  fi
  case "$libc" in
    musl*)
      fail "this runner's C library is musl (Alpine?), and diffusion-check's Linux binaries need glibc 2.34 or newer: run the job in a glibc image (Debian 12, Ubuntu 22.04, RHEL 9 or SGLang's own), or use the container action (uses: diffusion-check/diffusion-check@…)" ;;
    "glibc "*)
      v=${libc#glibc }
      major=${v%%.*} minor=${v#*.}
      minor=${minor%%[!0-9]*} # 2.35, 2.35.1, 2.28-custom: the digits after the first dot
      if [[ $major =~ ^[0-9]+$ && $minor =~ ^[0-9]+$ ]] && { [ "$major" -lt 2 ] || { [ "$major" = 2 ] && [ "$minor" -lt 34 ]; }; }; then
        fail "this runner has glibc $v, and diffusion-check's Linux binaries need glibc 2.34 or newer (Debian 12, Ubuntu 22.04, RHEL 9): use a newer image, or the container action"
      fi ;;
  esac
fi

asset="diffusion-check_${version#v}_${os}_${arch}.tar.gz"
dir="$RUNNER_TOOL_CACHE/diffusion-check/${version#v}/$arch"
marker="$dir.complete"

# Bounds on every download (a hostile mirror or base_url): the archive and checksums.txt may be
# at most this large, a fetch takes at most max_time in all and is given up when slower than
# 1 KB/s for speed_time; the binary in the archive is at most member_cap. The SETUP_* variables
# exist for the installer's own tests.
archive_cap=${SETUP_ARCHIVE_CAP:-$((256 << 20))}
sums_cap=$((1 << 20))
member_cap=${SETUP_MEMBER_CAP:-$((512 << 20))}
max_time=${SETUP_MAX_TIME:-600}
speed_time=${SETUP_SPEED_TIME:-60}
retries=${SETUP_RETRIES:-3}
# SETUP_GH: the GitHub CLI to verify attestations with (a test's fake); default gh on PATH.

tmp=$(mktemp -d "${RUNNER_TEMP:-/tmp}/diffusion-check-setup.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# fetch URL FILE CAP: the body of URL into FILE, at most CAP bytes; 2 when it is larger, 1 on
# any other failure (an HTTP error such as a 404, a timeout, a transfer too slow).
fetch() {
  local status=0
  if command -v curl >/dev/null; then
    curl -fsSL --retry "$retries" --retry-connrefused --max-time "$max_time" --speed-limit 1024 --speed-time "$speed_time" \
      --max-filesize "$3" "$1" | head -c "$(($3 + 1))" >"$2" || status=1
  elif command -v wget >/dev/null; then
    if command -v timeout >/dev/null; then
      timeout "$max_time" wget -q --tries=$((retries + 1)) --timeout="$speed_time" -O - "$1" | head -c "$(($3 + 1))" >"$2" || status=1
    else
      wget -q --tries=$((retries + 1)) --timeout="$speed_time" -O - "$1" | head -c "$(($3 + 1))" >"$2" || status=1
    fi
  else
    fail "neither curl nor wget is installed: install one (apt-get install -y curl)"
  fi
  [ "$(wc -c <"$2")" -le "$3" ] || return 2
  return "$status"
}

sha256() {
  if command -v sha256sum >/dev/null; then
    sha256sum "$1" | awk '{ print $1 }'
  elif command -v shasum >/dev/null; then
    shasum -a 256 "$1" | awk '{ print $1 }'
  else
    fail "neither sha256sum nor shasum is installed: cannot verify the download"
  fi
}

# The sum the archive must have: from the action's own checksums.txt when it lists the asset
# (pinned by the action's commit), else the release's, fetched on every run, cached entry or
# not: a record in the tool cache proves nothing (any job of the runner's user can write there).
pinned=${GITHUB_ACTION_PATH:+$GITHUB_ACTION_PATH/checksums.txt}
if [ -n "$pinned" ] && [ -f "$pinned" ] && awk -v f="$asset" '$2 == f || $2 == "*" f { found = 1 } END { exit !found }' "$pinned"; then
  sums=$pinned
  source_of_sums="the checksums.txt this action's commit carries ($pinned)"
else
  status=0
  fetch "$base/$version/checksums.txt" "$tmp/checksums.txt" "$sums_cap" || status=$?
  [ "$status" != 2 ] || fail "release $version: checksums.txt from $base/$version/ is larger than $((sums_cap >> 20)) MiB; refused"
  [ "$status" = 0 ] || fail "release $version: could not download checksums.txt from $base/$version/ (no such release?)"
  sums=$tmp/checksums.txt
  source_of_sums="the release's checksums.txt"
fi
# Each line is "<sha256>  <name>" or "<sha256> *<name>", as sha256sum -c reads it: the asset must
# be listed exactly once, with 64 hex digits (of either case).
listed=$(awk -v f="$asset" '$2 == f || $2 == "*" f { print $1 }' "$sums")
case "$(printf '%s' "$listed" | grep -c '')" in
  0) fail "release $version: $source_of_sums lists no $asset; refusing an unverified binary" ;;
  1) ;;
  *) fail "release $version: $source_of_sums lists $asset more than once; refusing an ambiguous sum" ;;
esac
[[ $listed =~ ^[0-9A-Fa-f]{64}$ ]] || fail "release $version: $source_of_sums gives $asset the sum '$listed', not 64 hex digits"
want=$(printf '%s' "$listed" | tr 'A-F' 'a-f')

# member ARCHIVE DEST: the binary of a verified archive, as a regular file of at most
# member_cap bytes, extracted into the folder DEST (which must be new); anything else in its
# place (a link, a folder, a device, a FIFO, two members of the name) is refused, naming the
# asset, before it is used or changed.
member() {
  local listing kind size
  listing=$(tar -tvzf "$1" diffusion-check 2>/dev/null) || fail "$asset: no diffusion-check binary in the archive"
  [ "$(printf '%s\n' "$listing" | grep -c '')" = 1 ] ||
    fail "$asset: the archive holds more than one entry named diffusion-check (or a folder of that name); refused"
  kind=${listing:0:1}
  size=$(printf '%s\n' "$listing" | awk '{ print $3 }')
  [ "$kind" = - ] || fail "$asset: diffusion-check in the archive is no regular file (type '$kind': a link, folder, device or FIFO); refused"
  [[ $size =~ ^[0-9]+$ ]] && [ "$size" -le "$member_cap" ] ||
    fail "$asset: diffusion-check in the archive is larger than $member_cap bytes ($size bytes); refused"
  mkdir "$2"
  tar -xzf "$1" -C "$2" --no-same-owner diffusion-check 2>/dev/null || fail "$asset: could not extract diffusion-check"
  [ -f "$2/diffusion-check" ] && [ ! -L "$2/diffusion-check" ] ||
    fail "$asset: the extracted diffusion-check is no regular file; refused"
  [ "$(wc -c <"$2/diffusion-check")" -le "$member_cap" ] || fail "$asset: diffusion-check unpacks to more than $member_cap bytes; refused"
}

# A cached entry is used only when the archive kept beside the binary still has the release's
# sum and the binary is still the archive's member, byte for byte.
cache_hit=false
why=""
if [ ! -e "$marker" ]; then
  why=""
elif [ -L "$dir" ] || [ ! -d "$dir" ] || [ -L "$dir/$asset" ] || [ ! -f "$dir/$asset" ]; then
  why="the entry holds no release archive"
elif [ "$(sha256 "$dir/$asset")" != "$want" ]; then
  why="its archive's SHA-256 is not the release's $want"
else
  member "$dir/$asset" "$tmp/cached"
  if [ -L "$dir/diffusion-check" ] || [ ! -f "$dir/diffusion-check" ] || ! cmp -s "$tmp/cached/diffusion-check" "$dir/diffusion-check"; then
    why="its binary is not the release archive's"
  else
    cache_hit=true
    echo "diffusion-check $version: found in the tool cache ($dir), archive SHA-256 $want verified against $source_of_sums"
  fi
fi
if [ "$cache_hit" = false ]; then
  [ -z "$why" ] || echo "diffusion-check $version: the tool cache's $dir is not trusted ($why): installing it again"
  status=0
  fetch "$base/$version/$asset" "$tmp/$asset" "$archive_cap" || status=$?
  [ "$status" != 2 ] || fail "release $version: $asset is larger than $archive_cap bytes; refused"
  [ "$status" = 0 ] ||
    fail "release $version has no asset $asset at $base/$version/ (no binary for $os/$arch in this release?), or it did not download within ${max_time}s"
  got=$(sha256 "$tmp/$asset")
  [ "$got" = "$want" ] ||
    fail "checksum mismatch for $asset of $version: SHA-256 $got, $source_of_sums says $want; the download is refused"
  member "$tmp/$asset" "$tmp/x"
  # A complete cache entry appears at once: the folder is renamed into place, then marked.
  rm -rf "$dir" "$marker"
  mkdir -p "$(dirname "$dir")"
  mkdir "$tmp/entry"
  mv "$tmp/x/diffusion-check" "$tmp/entry/diffusion-check"
  mv "$tmp/$asset" "$tmp/entry/$asset"
  chmod 755 "$tmp/entry/diffusion-check"
  mv "$tmp/entry" "$dir"
  touch "$marker"
  echo "diffusion-check $version: installed $asset (SHA-256 $got verified against $source_of_sums) into $dir"
fi

# The attestation: the release workflow's signed build provenance of the archive (docs/security.md).
gh=${SETUP_GH:-gh}
have_gh=false
command -v "$gh" >/dev/null && have_gh=true
case "$verify/$have_gh/${INPUT_TOKEN:+token}" in
  checksum/*)
    echo "diffusion-check $version: verified by checksum (verify: checksum); no attestation checked" ;;
  */true/token)
    if ! out=$(GH_TOKEN=$INPUT_TOKEN "$gh" attestation verify "$dir/$asset" --repo "$repo" 2>&1); then
      fail "$asset of $version: gh attestation verify --repo $repo failed; the binary is refused: $out"
    fi
    echo "diffusion-check $version: verified by attestation (gh attestation verify $asset --repo $repo) and checksum" ;;
  attestation/false/*)
    fail "verify: attestation needs the GitHub CLI (gh) on PATH to run gh attestation verify; install it, or set verify: checksum" ;;
  attestation/true/)
    fail "verify: attestation needs a token for gh attestation verify (the token input); none is set" ;;
  *)
    why="gh is not on PATH"
    [ "$have_gh" = false ] || why="no token was given"
    echo "diffusion-check $version: verified by checksum only ($why, so gh attestation verify did not run; verify: attestation requires it)" ;;
esac

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
