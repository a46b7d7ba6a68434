# diffusion-check as a GitHub container action.
#
# Stage 1 builds the binary with cgo (go-nvml loads the driver's libnvidia-ml at run time, so no
# CUDA is needed to build). Stage 2 is a slim Debian with ffmpeg/ffprobe, which decode and
# encode every output. scripts/container-build builds this image without pulling any base image.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=1 CGO_CFLAGS=-Wno-deprecated-declarations GOEXPERIMENT=simd \
    go build -trimpath -ldflags="-s -w" -o /out/diffusion-check ./cmd/diffusion-check

FROM debian:bookworm-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ffmpeg ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/diffusion-check /usr/local/bin/diffusion-check
# With the nvidia container runtime (the runner host's default runtime), these expose every GPU
# and the driver's compute and NVML libraries to the action.
ENV NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility
# No USER: GitHub runs container actions as root so that they can write the mounted workspace
# (/github/workspace) and the runner's file commands (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY);
# a non-root user cannot. The binary needs no privilege beyond that.
ENTRYPOINT ["/usr/local/bin/diffusion-check", "action"]
