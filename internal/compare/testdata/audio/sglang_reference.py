#!/usr/bin/env python3
"""SGLang's audio consistency numbers for the pairs of make.sh, from SGLang's own functions.

usage (from the repository root, on a machine with python3 and numpy; no ffmpeg needed):

    python3 internal/compare/testdata/audio/sglang_reference.py > internal/compare/testdata/audio/sglang_reference.json

The functions between the two COPIED markers are copied verbatim from
python/sglang/multimodal_gen/test/test_utils.py of sgl-project/sglang main at commit
a7ec6b97f786892a73d1edfc2e35b09c37997b6c (2026-08-21, after PR #35511): decode_audio_gt_wav,
encode_audio_gt_wav, AudioConsistencyThresholds, AudioConsistencyResult,
_audio_magnitude_spectrogram and compare_audio_with_gt, with the constants they use.
extract_audio_pcm runs ffmpeg, which this machine lacks: make.sh ran its exact command and kept
its output in raw/*.f32, which is read here as extract_audio_pcm reads ffmpeg's stdout
(np.frombuffer(..., dtype="<f4")). validate_audio_output likewise: its checks on the decoded
samples are copied into output_valid below (probe_audio_stream, the ffprobe part, is not).
"""
import datetime
import io
import json
import math
import os
import platform
import sys
import wave
from dataclasses import dataclass

import numpy as np

# ---- COPIED from sglang test_utils.py (a7ec6b97f786) ----
AUDIO_CONSISTENCY_SAMPLE_RATE = 16_000
DEFAULT_AUDIO_SPECTRAL_SIMILARITY_THRESHOLD = 0.95
DEFAULT_AUDIO_WAVEFORM_CORRELATION_THRESHOLD = 0.90
DEFAULT_AUDIO_RMS_DB_DIFF_THRESHOLD = 2.0
DEFAULT_AUDIO_DURATION_DIFF_THRESHOLD = 0.10


def encode_audio_gt_wav(
    audio: np.ndarray,
    sample_rate: int = AUDIO_CONSISTENCY_SAMPLE_RATE,
) -> bytes:
    pcm = np.round(np.clip(audio, -1.0, 1.0) * 32767.0).astype("<i2")
    output = io.BytesIO()
    with wave.open(output, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(sample_rate)
        wav.writeframes(pcm.tobytes())
    return output.getvalue()


def decode_audio_gt_wav(
    content: bytes,
    expected_sample_rate: int = AUDIO_CONSISTENCY_SAMPLE_RATE,
) -> np.ndarray:
    with wave.open(io.BytesIO(content), "rb") as wav:
        assert wav.getnchannels() == 1, "Audio GT must be mono"
        assert wav.getsampwidth() == 2, "Audio GT must use signed 16-bit PCM"
        assert wav.getframerate() == expected_sample_rate, (
            f"Audio GT sample rate must be {expected_sample_rate}, "
            f"got {wav.getframerate()}"
        )
        pcm = np.frombuffer(wav.readframes(wav.getnframes()), dtype="<i2")
    return pcm.astype(np.float32) / 32767.0


@dataclass(frozen=True)
class AudioConsistencyThresholds:
    spectral_similarity_threshold: float
    waveform_correlation_threshold: float
    rms_db_diff_threshold: float
    duration_diff_threshold: float


@dataclass(frozen=True)
class AudioConsistencyResult:
    passed: bool
    spectral_similarity: float
    waveform_correlation: float
    rms_db_diff: float
    duration_diff: float
    thresholds: AudioConsistencyThresholds


def _audio_magnitude_spectrogram(audio: np.ndarray) -> np.ndarray:
    frame_length = 512
    hop_length = 160
    if audio.size < frame_length:
        audio = np.pad(audio, (0, frame_length - audio.size))
    frame_count = 1 + (audio.size - frame_length) // hop_length
    frames = np.lib.stride_tricks.sliding_window_view(audio, frame_length)[
        : frame_count * hop_length : hop_length
    ]
    window = np.hanning(frame_length).astype(np.float32)
    magnitude = np.abs(np.fft.rfft(frames * window, axis=1))
    return np.sqrt(magnitude).astype(np.float32, copy=False)


def compare_audio_with_gt(
    output_audio: np.ndarray,
    gt_audio: np.ndarray,
    thresholds: AudioConsistencyThresholds,
    sample_rate: int = AUDIO_CONSISTENCY_SAMPLE_RATE,
) -> AudioConsistencyResult:
    output_audio = np.asarray(output_audio, dtype=np.float32).reshape(-1)
    gt_audio = np.asarray(gt_audio, dtype=np.float32).reshape(-1)
    if output_audio.size == 0 or gt_audio.size == 0:
        raise ValueError("Audio consistency inputs must be non-empty")
    if not np.isfinite(output_audio).all() or not np.isfinite(gt_audio).all():
        raise ValueError("Audio consistency inputs must be finite")

    duration_diff = abs(output_audio.size - gt_audio.size) / float(sample_rate)
    sample_count = min(output_audio.size, gt_audio.size)
    output = output_audio[:sample_count]
    target = gt_audio[:sample_count]

    output_centered = output - float(output.mean())
    target_centered = target - float(target.mean())
    correlation_denominator = float(
        np.linalg.norm(output_centered) * np.linalg.norm(target_centered)
    )
    waveform_correlation = (
        float(np.dot(output_centered, target_centered)) / correlation_denominator
        if correlation_denominator > 0
        else 0.0
    )

    output_spectrum = _audio_magnitude_spectrogram(output)
    target_spectrum = _audio_magnitude_spectrogram(target)
    spectral_denominator = float(
        np.linalg.norm(output_spectrum) * np.linalg.norm(target_spectrum)
    )
    spectral_similarity = (
        float(np.vdot(output_spectrum, target_spectrum)) / spectral_denominator
        if spectral_denominator > 0
        else 0.0
    )

    output_rms = float(np.sqrt(np.mean(np.square(output, dtype=np.float64))))
    target_rms = float(np.sqrt(np.mean(np.square(target, dtype=np.float64))))
    rms_db_diff = abs(
        20.0 * math.log10(max(output_rms, 1e-12))
        - 20.0 * math.log10(max(target_rms, 1e-12))
    )

    passed = (
        spectral_similarity >= thresholds.spectral_similarity_threshold
        and waveform_correlation >= thresholds.waveform_correlation_threshold
        and rms_db_diff <= thresholds.rms_db_diff_threshold
        and duration_diff <= thresholds.duration_diff_threshold
    )
    return AudioConsistencyResult(
        passed=passed,
        spectral_similarity=spectral_similarity,
        waveform_correlation=waveform_correlation,
        rms_db_diff=rms_db_diff,
        duration_diff=duration_diff,
        thresholds=thresholds,
    )
# ---- end of COPIED ----


def extracted(path):
    """What extract_audio_pcm returns, from ffmpeg's stdout kept by make.sh."""
    with open(path, "rb") as f:
        return np.frombuffer(f.read(), dtype="<f4").copy()


def output_valid(audio):
    """validate_audio_output's checks on the decoded samples (test_utils.py, a7ec6b97f786)."""
    if not audio.size > 0:
        return False, "empty"
    if not np.isfinite(audio).all():
        return False, "not finite"
    rms = float(np.sqrt(np.mean(np.square(audio, dtype=np.float64))))
    if not rms > 1e-5:
        return False, f"silent or near-silent: rms={rms:.3e}"
    return True, ""


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "pairs.json")) as f:
        pairs = json.load(f)["pairs"]
    thresholds = AudioConsistencyThresholds(
        DEFAULT_AUDIO_SPECTRAL_SIMILARITY_THRESHOLD,
        DEFAULT_AUDIO_WAVEFORM_CORRELATION_THRESHOLD,
        DEFAULT_AUDIO_RMS_DB_DIFF_THRESHOLD,
        DEFAULT_AUDIO_DURATION_DIFF_THRESHOLD,
    )
    out = {
        "how": "internal/compare/testdata/audio/sglang_reference.py (SGLang test_utils.py a7ec6b97f786, verbatim) on make.sh's raw/ and gt/",
        "date": datetime.date.today().isoformat(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pairs": {},
        "gt_wav": {},
    }
    for p in pairs:
        output = extracted(os.path.join(here, p["output_raw"]))
        if p["gt_kind"] == "wav":
            with open(os.path.join(here, p["gt"]), "rb") as f:
                gt = decode_audio_gt_wav(f.read())
        else:
            gt = extracted(os.path.join(here, p["gt_raw"]))
        r = compare_audio_with_gt(output, gt, thresholds)
        valid, why = output_valid(output)
        n = min(output.size, gt.size)
        out["pairs"][p["name"]] = {
            "output_samples": int(output.size),
            "gt_samples": int(gt.size),
            "spectral_similarity": r.spectral_similarity,
            "waveform_correlation": r.waveform_correlation,
            "rms_db_diff": r.rms_db_diff,
            "duration_diff": r.duration_diff,
            "passed": bool(r.passed),
            "output_rms": float(np.sqrt(np.mean(np.square(output[:n], dtype=np.float64)))),
            "gt_rms": float(np.sqrt(np.mean(np.square(gt[:n], dtype=np.float64)))),
            "output_valid": valid,
            "output_invalid_reason": why,
        }
        if p["gt_kind"] == "wav":
            raw = extracted(os.path.join(here, p["gt_raw"]))
            with open(os.path.join(here, p["gt"]), "rb") as f:
                out["gt_wav"][p["gt"]] = encode_audio_gt_wav(raw) == f.read()
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
