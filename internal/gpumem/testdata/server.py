"""A minimal diffusion-like server for the gpumem end-to-end test on a real GPU.

It speaks the image endpoint of spec/sglang-compat.md (POST /v1/images/generations with
b64_json PNG output, GET /health, GET /v1/models) and appends one performance.log record per
request to $SGLANG_PERF_LOG_DIR. Loading holds --load-mib of "weights" on the GPU; each request
runs its denoise steps on --step-mib activation tensors that are freed after each step, like a
diffusion step. --leak-mib keeps that much more GPU memory alive after every request: the
cross-request leak that diffusion-check's growth check exists to catch. --slow-at K or
--slow-after K with --slow-factor F make request K (or every request after K) run each denoise
step F times over, real GPU work: a one-off or a persistent slowdown, for confirmation requests
(docs/noise.md). --spike-at K with --spike-mib M and --spike-ms T make request K hold M MiB more
GPU memory for T ms in the middle of its denoising, then free it: a one-off spike, which the
next request no longer shows (scripts/gpu-check). --no-perf-log writes no performance.log, as
a server that is not SGLang's: its memory is then only what NVML measures.

--no-gpu runs the same HTTP and perf-log logic without PyTorch, for a dry run on a machine
without a GPU.
"""
import argparse
import base64
import json
import os
import struct
import sys
import threading
import time
import uuid
import zlib
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MIB = 1 << 20


def png(width, height, seed):
    """An RGB PNG whose pixels depend only on (width, height, seed)."""
    rows = []
    for y in range(height):
        row = bytearray([0])
        for x in range(width):
            row += bytes(((x * 255 // max(width - 1, 1) + seed) % 256,
                          (y * 255 // max(height - 1, 1)) % 256,
                          (seed * 37) % 256))
        rows.append(bytes(row))

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"".join(rows)))
            + chunk(b"IEND", b""))


class GPU:
    """The GPU work; a stand-in that only sleeps under --no-gpu."""

    def __init__(self, args):
        self.args = args
        self.leaked = []
        if args.no_gpu:
            self.torch = None
            return
        import torch
        self.torch = torch
        self.dev = torch.device("cuda", 0)
        torch.cuda.set_device(self.dev)
        torch.cuda.reset_peak_memory_stats()
        self.weights = torch.empty(args.load_mib * MIB, dtype=torch.uint8, device=self.dev)
        self.weights.fill_(1)
        torch.cuda.synchronize()
        self.load_peak = self.snapshot()

    def snapshot(self):
        if self.torch is None:
            return {}
        c = self.torch.cuda
        return {"peak_reserved_mb": c.max_memory_reserved() / MIB,
                "peak_allocated_mb": c.max_memory_allocated() / MIB,
                "reserved_mb": c.memory_reserved() / MIB,
                "allocated_mb": c.memory_allocated() / MIB}

    def step(self):
        if self.torch is None:
            time.sleep(0.01)
            return
        t = self.torch
        n = self.args.step_mib * MIB // 4
        side = int((n // 2) ** 0.5)
        a = t.randn(side, side, device=self.dev)
        b = t.randn(side, side, device=self.dev)
        (a @ b).sum().item()
        del a, b

    def leak(self):
        if self.args.leak_mib <= 0:
            return
        if self.torch is None:
            self.leaked.append(bytearray(self.args.leak_mib * MIB))
            return
        x = self.torch.empty(self.args.leak_mib * MIB, dtype=self.torch.uint8, device=self.dev)
        x.fill_(2)
        self.leaked.append(x)

    def spike(self, mib, ms):
        """Holds mib more memory for ms milliseconds, then frees it."""
        if self.torch is None:
            x = bytearray(mib * MIB)
            time.sleep(ms / 1000)
            del x
            return
        x = self.torch.empty(mib * MIB, dtype=self.torch.uint8, device=self.dev)
        x.fill_(3)
        self.torch.cuda.synchronize()
        time.sleep(ms / 1000)
        del x
        self.torch.cuda.empty_cache()

    def reset_peak(self):
        if self.torch is not None:
            self.torch.cuda.reset_peak_memory_stats()


class Handler(BaseHTTPRequestHandler):
    server_version = "gpumem-testserver/1"

    def log_message(self, fmt, *args):
        sys.stderr.write("%s %s\n" % (self.address_string(), fmt % args))

    def send_json(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/health":
            self.send_json(200, {"status": "ok"})
        elif self.path == "/v1/models":
            self.send_json(200, {"object": "list", "data": [{"id": "gpumem-test", "object": "model", "num_gpus": 1, "task_type": "T2I"}]})
        else:
            self.send_json(404, {"error": {"message": "not found: " + self.path}})

    def do_POST(self):
        if self.path != "/v1/images/generations":
            self.send_json(404, {"error": {"message": "not found: " + self.path}})
            return
        try:
            req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            w, h = (int(v) for v in req.get("size", "64x64").split("x"))
        except (ValueError, TypeError) as e:
            self.send_json(400, {"error": {"message": "bad request: %s" % e}})
            return
        st = self.server.state
        with st.lock:
            rid = uuid.uuid4().hex
            t0 = time.perf_counter()
            st.gpu.reset_peak()
            stages = [{"name": "TextEncodingStage", "execution_time_ms": 1.0}]
            steps = []
            d0 = time.perf_counter()
            st.count += 1
            a = self.server.args
            slow = (a.slow_at and st.count == a.slow_at) or (a.slow_after and st.count > a.slow_after)
            repeat = a.slow_factor if slow else 1
            n = int(req.get("num_inference_steps") or 8)
            for i in range(n):
                s0 = time.perf_counter()
                for _ in range(repeat):
                    st.gpu.step()
                if a.spike_at and st.count == a.spike_at and i == n // 2:
                    st.gpu.spike(a.spike_mib, a.spike_ms)
                steps.append((time.perf_counter() - s0) * 1000)
            stages.append({"name": "DenoisingStage", "execution_time_ms": (time.perf_counter() - d0) * 1000})
            st.gpu.leak()
            e0 = time.perf_counter()
            image = png(w, h, int(req.get("seed") or 0))
            stages.append({"name": "DecodingStage", "execution_time_ms": (time.perf_counter() - e0) * 1000})
            total = (time.perf_counter() - t0) * 1000
            rec = {"request_id": rid, "timestamp": datetime.now(timezone.utc).isoformat(),
                   "tag": "pipeline_stage_metrics", "commit_hash": "gpumem-test",
                   "stages": stages, "steps": steps, "total_duration_ms": total,
                   "memory_snapshots": {"runtime_peak": st.gpu.snapshot()}}
            if getattr(st.gpu, "load_peak", None):
                rec["memory_snapshots"]["load_peak"] = st.gpu.load_peak
            st.append(rec)
        self.send_json(200, {"id": rid, "created": int(time.time()),
                             "data": [{"b64_json": base64.b64encode(image).decode()}]})


class State:
    def __init__(self, gpu, perf_dir):
        self.gpu = gpu
        self.lock = threading.Lock()
        self.count = 0  # requests served, 1-based once counted: what --slow-at counts
        self.perf = os.path.join(perf_dir, "performance.log") if perf_dir else None

    def append(self, rec):
        if self.perf:
            with open(self.perf, "a") as f:
                f.write(json.dumps(rec) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--load-mib", type=int, default=2048)
    ap.add_argument("--step-mib", type=int, default=1024, help="activation memory of one step")
    ap.add_argument("--leak-mib", type=int, default=0, help="GPU memory kept after every request")
    ap.add_argument("--slow-at", type=int, default=0, help="request K (1-based) is slow")
    ap.add_argument("--slow-after", type=int, default=0, help="every request after K is slow")
    ap.add_argument("--slow-factor", type=int, default=3, help="a slow request runs each step this many times")
    ap.add_argument("--spike-at", type=int, default=0, help="request K (1-based) holds --spike-mib more for --spike-ms")
    ap.add_argument("--spike-mib", type=int, default=8192)
    ap.add_argument("--spike-ms", type=int, default=30)
    ap.add_argument("--no-perf-log", action="store_true", help="write no performance.log (a server that is not SGLang's)")
    ap.add_argument("--no-gpu", action="store_true")
    args = ap.parse_args()
    gpu = GPU(args)
    srv = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    srv.state = State(gpu, None if args.no_perf_log else os.environ.get("SGLANG_PERF_LOG_DIR"))
    srv.args = args
    print("Application startup complete.", flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
