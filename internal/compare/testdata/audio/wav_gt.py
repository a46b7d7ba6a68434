#!/usr/bin/env python3
"""Writes gt/TRACK.wav and pairs.json for make.sh, with the standard library only (no numpy).

Reads the pairs from stdin, one a line: NAME... OUTPUT-TRACK GT (GT is wav:TRACK or media:TRACK).
gt/TRACK.wav is SGLang's encode_audio_gt_wav(raw/TRACK.f32) (test_utils.py, sgl-project/sglang
main at a7ec6b97f786, 2026-08-21):

    pcm = np.round(np.clip(audio, -1.0, 1.0) * 32767.0).astype("<i2")   # float32 product
    wave.open(..., "wb"): 1 channel, 2 bytes a sample, 16000 Hz, writeframes(pcm.tobytes())

done here without numpy: the float32 product is the exact double product rounded to float32,
np.round and Python's round both round half to even. sglang_reference.py runs SGLang's own
function on the numpy machine and records whether the bytes agree.
"""
import array
import glob
import json
import os
import struct
import sys
import wave


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def encode_gt_wav(samples, path):
    pcm = array.array("h", (int(round(f32(min(max(v, -1.0), 1.0) * 32767.0))) for v in samples))
    if sys.byteorder != "little":
        pcm.byteswap()
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(pcm.tobytes())


def main():
    pairs = []
    wavs = set()
    for line in sys.stdin:
        fields = line.split()
        if not fields:
            continue
        name, out, gt = " ".join(fields[:-2]), fields[-2], fields[-1]
        kind, track = gt.split(":")
        if kind == "wav":
            wavs.add(track)
            gt_path = f"gt/{track}.wav"
        else:
            (gt_path,) = glob.glob(f"src/{track}.*")
        (out_src,) = glob.glob(f"src/{out}.*")
        pairs.append({
            "name": name,
            "output": out_src,
            "output_raw": f"raw/{out}.f32",
            "gt_kind": kind,
            "gt": gt_path,
            "gt_raw": f"raw/{track}.f32",
        })
    for track in sorted(wavs):
        raw = array.array("f")
        with open(f"raw/{track}.f32", "rb") as f:
            raw.frombytes(f.read())
        if sys.byteorder != "little":
            raw.byteswap()
        encode_gt_wav(raw, f"gt/{track}.wav")
    with open("pairs.json", "w") as f:
        json.dump({"pairs": pairs}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
