"""GPU memory workload for the gpumem validation (go test -tags gpu).

Talks to the test over stdin/stdout, one line each way per phase, so that the test opens and
closes its measurement windows exactly around each allocation:

    script -> test: "<phase> key=value ..."      test -> script: "go"

Phases: ctx (CUDA context up, nothing allocated), steady (4 GiB held), series k (a series of
spikes begins; the test may switch sampler settings), spike i (about to allocate the 20 GiB
tensor), spiked i (it was held and freed), gap i (steady again), idle (the test measures the
sampler's CPU cost while nothing changes), done.

--devices 0,1 allocates the context, the steady tensor and every spike on each listed GPU, the
spikes at the same time.
"""
import argparse
import sys
import time

import torch

MIB = 1 << 20


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()
    got = sys.stdin.readline().strip()
    if got != "go":
        sys.exit(f"workload: expected 'go' after {line!r}, got {got!r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steady-mib", type=int, default=4096)
    ap.add_argument("--spike-mib", type=int, default=20480)
    ap.add_argument("--hold-ms", type=float, default=2.0)
    ap.add_argument("--spikes", type=int, default=20)
    ap.add_argument("--gap-ms", type=float, default=50.0)
    ap.add_argument("--devices", default="0", help="comma-separated GPU indices")
    ap.add_argument("--series", type=int, default=1, help="series of --spikes spikes")
    a = ap.parse_args()
    devs = [torch.device("cuda", int(d)) for d in a.devices.split(",")]

    def sync():
        for d in devs:
            torch.cuda.synchronize(d)

    def reserved():
        return sum(torch.cuda.memory_reserved(d) for d in devs) / MIB

    for d in devs:
        torch.empty(1, device=d)  # creates the CUDA context
    sync()
    say(f"ctx reserved_mib={reserved():.1f}")

    steady = [torch.empty(a.steady_mib * MIB, dtype=torch.uint8, device=d) for d in devs]
    for t in steady:
        t.fill_(1)
    sync()
    say(f"steady alloc_mib={a.steady_mib} reserved_mib={reserved():.1f} "
        f"max_allocated_mib={torch.cuda.max_memory_allocated(devs[0]) / MIB:.1f}")

    hold = a.hold_ms / 1000
    for k in range(a.series):
        say(f"series {k}")
        for i in range(a.spikes):
            say(f"spike {i}")
            t0 = time.perf_counter()
            x = [torch.empty(a.spike_mib * MIB, dtype=torch.uint8, device=d) for d in devs]
            t1 = time.perf_counter()
            while time.perf_counter() - t1 < hold:
                pass
            del x
            for d in devs:
                with torch.cuda.device(d):
                    torch.cuda.empty_cache()
            sync()
            t2 = time.perf_counter()
            say(f"spiked {i} alloc_us={(t1 - t0) * 1e6:.0f} alive_us={(t2 - t1) * 1e6:.0f} "
                f"reserved_mib={reserved():.1f}")
            time.sleep(a.gap_ms / 1000)
            say(f"gap {i}")
    say(f"idle max_allocated_mib={torch.cuda.max_memory_allocated(devs[0]) / MIB:.1f} "
        f"max_reserved_mib={torch.cuda.max_memory_reserved(devs[0]) / MIB:.1f}")
    del steady
    sys.stdout.write("done\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
