# diffusion-check as a GitHub container action. The release workflow builds it for linux/amd64
# and linux/arm64 and pushes it to GHCR; action.yml names that image (docs/releasing.md).
#
# Stage 1 builds the binary with cgo (go-nvml loads the driver's libnvidia-ml at run time, so no
# CUDA is needed to build). It runs on the build machine's own platform and cross-compiles for
# the target (arm64 with Debian's cross gcc), so a multi-arch build emulates nothing but the
# runtime stage's package installation. Stage 2 is a slim Debian with ffmpeg/ffprobe, which
# decode and encode every output. scripts/container-build builds this image without pulling
# any base image.
#
# Layers are ordered for the cache: the cross compiler, then the modules (go.mod and go.sum
# only), then the source; the version stamps are declared last, so a new version re-runs only
# the final `go build`, and BuildKit cache mounts keep the module and build caches between
# builds (the built-in BuildKit frontend and podman both read `RUN --mount`; the release
# workflow also keeps the layers in its type=gha cache).

FROM --platform=$BUILDPLATFORM golang:1.26-bookworm AS build
ARG TARGETARCH
ARG BUILDARCH
RUN if [ "${TARGETARCH:-$BUILDARCH}" = arm64 ] && [ "$(uname -m)" != aarch64 ]; then \
      apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        gcc-aarch64-linux-gnu libc6-dev-arm64-cross && rm -rf /var/lib/apt/lists/*; \
    fi
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
# Version stamps (docs/releasing.md); .git is not in the build context (.dockerignore).
ARG VERSION=""
ARG COMMIT=""
ARG DATE=""
# amd64 is built with GOEXPERIMENT=simd: the vector kernels are compiled in and chosen at run
# time by CPU feature, so the image runs on every x86-64 CPU.
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    set -e; arch=${TARGETARCH:-$(go env GOARCH)}; \
    export CGO_ENABLED=1 CGO_CFLAGS=-Wno-deprecated-declarations GOOS=linux GOARCH=$arch; \
    if [ "$arch" = amd64 ]; then export GOEXPERIMENT=simd; fi; \
    if [ "$arch" = arm64 ] && [ "$(uname -m)" != aarch64 ]; then export CC=aarch64-linux-gnu-gcc; fi; \
    go build -trimpath \
      -ldflags="-s -w -X main.stampVersion=$VERSION -X main.stampCommit=$COMMIT -X main.stampDate=$DATE" \
      -o /out/diffusion-check ./cmd/diffusion-check

FROM debian:bookworm-slim
# Debian's ffmpeg without recommends. Through libGL it pulls Mesa's OpenGL drivers
# (libgl1-mesa-dri) and the LLVM and Z3 libraries they need, about half of what the install
# adds. ffmpeg and ffprobe do not link them (libGL loads a driver only when a GL context is made,
# which no ffmpeg command of diffusion-check does), so they are purged in the same layer, and
# the build fails if ffmpeg or ffprobe then lacks any library (ldd). docs/releasing.md has the
# sizes.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ffmpeg ca-certificates \
 && dpkg --purge --force-depends libgl1-mesa-dri libllvm15 libz3-4 \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/apt /var/log/dpkg.log \
      /usr/share/man /usr/share/info /usr/share/lintian \
 && find /usr/share/doc -type f ! -name copyright -delete \
 && if ldd /usr/bin/ffmpeg /usr/bin/ffprobe | grep 'not found'; then exit 1; fi \
 && ffmpeg -hide_banner -version >/dev/null
COPY --from=build /out/diffusion-check /usr/local/bin/diffusion-check
COPY LICENSE /usr/share/licenses/diffusion-check/LICENSE
LABEL org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.title="diffusion-check"
# With the nvidia container runtime (the runner host's default runtime), these expose every GPU
# and the driver's compute and NVML libraries to the action.
ENV NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility
# No USER: GitHub runs container actions as root so that they can write the mounted workspace
# (/github/workspace) and the runner's file commands (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY);
# a non-root user cannot. The binary needs no privilege beyond that.
ENTRYPOINT ["/usr/local/bin/diffusion-check", "action"]
