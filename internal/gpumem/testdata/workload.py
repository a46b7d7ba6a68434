"""GPU memory workload for the gpumem validation (go test -tags gpu).

Talks to the test over stdin/stdout, one line each way per phase, so that the test opens and
closes its measurement windows exactly around each allocation:

    script -> test: "<phase> key=value ..."      test -> script: "go"

Phases: ctx (CUDA context up, nothing allocated), steady (4 GiB held), spike i (about to
allocate the 20 GiB tensor), spiked i (it was held and freed), gap i (steady again),
idle (the test measures the sampler's CPU cost while nothing changes), done.
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
    ap.add_argument("--device", type=int, default=0)
    a = ap.parse_args()
    dev = torch.device("cuda", a.device)
    torch.cuda.set_device(dev)
    torch.empty(1, device=dev)  # creates the CUDA context
    torch.cuda.synchronize()
    say(f"ctx reserved_mib={torch.cuda.memory_reserved() / MIB:.1f}")

    steady = torch.empty(a.steady_mib * MIB, dtype=torch.uint8, device=dev)
    steady.fill_(1)
    torch.cuda.synchronize()
    say(f"steady alloc_mib={a.steady_mib} reserved_mib={torch.cuda.memory_reserved() / MIB:.1f} "
        f"max_allocated_mib={torch.cuda.max_memory_allocated() / MIB:.1f}")

    hold = a.hold_ms / 1000
    for i in range(a.spikes):
        say(f"spike {i}")
        t0 = time.perf_counter()
        x = torch.empty(a.spike_mib * MIB, dtype=torch.uint8, device=dev)
        t1 = time.perf_counter()
        while time.perf_counter() - t1 < hold:
            pass
        del x
        torch.cuda.empty_cache()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        say(f"spiked {i} alloc_us={(t1 - t0) * 1e6:.0f} alive_us={(t2 - t1) * 1e6:.0f} "
            f"reserved_mib={torch.cuda.memory_reserved() / MIB:.1f}")
        time.sleep(a.gap_ms / 1000)
        say(f"gap {i}")
    say(f"idle max_allocated_mib={torch.cuda.max_memory_allocated() / MIB:.1f} "
        f"max_reserved_mib={torch.cuda.max_memory_reserved() / MIB:.1f}")
    del steady
    sys.stdout.write("done\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
