#!/usr/bin/env python3
"""Reference SSIM/PSNR/MAD values for checks/ssim_test.go, computed with scikit-image.

usage: ssim_reference.py PAIRS_DIR > ssim_reference.json
       ssim_reference.py --bench PAIRS_DIR NAME RUNS   # median seconds of one structural_similarity call

PAIRS_DIR holds NAME_a.png and NAME_b.png for every pair, written by
`go test ./internal/metrics -ssim.pairs=PAIRS_DIR`. SSIM is structural_similarity(a, b, channel_axis=2,
data_range=255) with scikit-image's defaults; per-channel values are the same call on each
channel alone; PSNR is peak_signal_noise_ratio(a, b, data_range=255) (null when identical: +Inf);
MAD is np.mean(np.abs(a.astype(float) - b)).
"""
import datetime
import glob
import json
import math
import os
import platform
import statistics
import sys
import time

import numpy as np
import skimage
from PIL import Image
from skimage.metrics import peak_signal_noise_ratio, structural_similarity


def load(path):
    return np.asarray(Image.open(path).convert("RGB"))


def pair(d, name):
    return load(os.path.join(d, name + "_a.png")), load(os.path.join(d, name + "_b.png"))


def main():
    if sys.argv[1] == "--bench":
        d, name, runs = sys.argv[2], sys.argv[3], int(sys.argv[4])
        a, b = pair(d, name)
        structural_similarity(a, b, channel_axis=2, data_range=255)  # warm up
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            structural_similarity(a, b, channel_axis=2, data_range=255)
            times.append(time.perf_counter() - t)
        print(json.dumps({"pair": name, "runs": runs, "median_s": statistics.median(times), "times_s": times}))
        return
    d = sys.argv[1]
    out = {
        "how": "internal/metrics/testdata/ssim_reference.py on PNGs written by `go test ./internal/metrics -ssim.pairs=DIR`",
        "date": datetime.date.today().isoformat(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "skimage": skimage.__version__,
        "pairs": {},
    }
    for p in sorted(glob.glob(os.path.join(d, "*_a.png"))):
        name = os.path.basename(p)[: -len("_a.png")]
        a, b = pair(d, name)
        psnr = peak_signal_noise_ratio(a, b, data_range=255)
        out["pairs"][name] = {
            "width": a.shape[1],
            "height": a.shape[0],
            "ssim": float(structural_similarity(a, b, channel_axis=2, data_range=255)),
            "ssim_channels": [float(structural_similarity(a[..., c], b[..., c], data_range=255)) for c in range(3)],
            "psnr": None if math.isinf(psnr) else float(psnr),
            "mean_abs_diff": float(np.mean(np.abs(a.astype(float) - b))),
        }
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
