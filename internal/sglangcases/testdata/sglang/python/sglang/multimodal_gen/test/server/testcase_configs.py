"""A stand-in for SGLang's testcase_configs.py with the same dataclasses and field names.

Written for diffusion-check's tests; it keeps only what the exporter reads. Like SGLang's, it
prints while it loads (its tolerance profile), which must not reach the exporter's JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

print("--- Performance Tolerance Profile: pr_test ---")


@dataclass
class DiffusionServerArgs:
    model_path: str
    modality: str | None = None
    custom_validator: str | None = None
    num_gpus: int = 1
    tp_size: int | None = None
    ep_size: int | None = None
    ulysses_degree: int | None = None
    ring_degree: int | None = None
    cfg_parallel: bool | None = None
    lora_path: str | None = None
    dynamic_lora_path: str | None = None
    second_lora_path: str | None = None
    dit_layerwise_offload: bool = False
    dit_offload_prefetch_size: int | float | None = None
    enable_cache_dit: bool = False
    text_encoder_cpu_offload: bool = False
    extras: list[str] = field(default_factory=list)
    env_vars: dict[str, str] = field(default_factory=dict)

    def __post_init__(self):
        if self.modality is None:
            self.modality = "video" if "Wan" in self.model_path else "image"
        if self.custom_validator is None:
            self.custom_validator = {"image": "image", "video": "video", "3d": "mesh", "action": "action"}[self.modality]


@dataclass(frozen=True)
class DiffusionSamplingParams:
    output_size: str = ""
    prompt: str | None = None
    image_path: Path | str | None = None
    seconds: int = 1
    num_frames: int | None = None
    fps: int | None = None
    direct_url_test: bool = False
    output_format: str | None = None
    expect_audio_output: bool = False
    num_outputs_per_prompt: int = 1
    realtime_num_chunks: int | None = None
    realtime_events: list[dict[str, Any]] = field(default_factory=list)
    realtime_perf_thresholds: dict[str, float] = field(default_factory=dict)
    realtime_perf_ignore_initial_chunks: int = 0
    realtime_output_format: str | None = None
    extras: dict = field(default_factory=dict)


@dataclass(frozen=True)
class DiffusionTestCase:
    id: str
    server_args: DiffusionServerArgs
    sampling_params: DiffusionSamplingParams | None = None
    run_perf_check: bool = True
    perf_repeat_requests: int = 1
    perf_warmup_requests: int = 0
    run_consistency_check: bool = True
    run_component_accuracy_check: bool = True
    run_models_api_check: bool = True
    expected_model_id: str | None = None
    run_t2v_input_reference_check: bool = True
    run_lora_basic_api_check: bool = False
    run_lora_dynamic_load_check: bool = False
    run_lora_dynamic_switch_check: bool = False
    run_multi_lora_api_check: bool = False

    def __post_init__(self):
        if self.sampling_params is None:
            default = T2V_sampling_params if self.server_args.modality == "video" else T2I_sampling_params
            object.__setattr__(self, "sampling_params", default)
        # A consistency case asks for the exact path unless it names a quality (SGLang's rule).
        if self.run_consistency_check and "quality" not in self.sampling_params.extras:
            object.__setattr__(
                self,
                "sampling_params",
                replace(self.sampling_params, extras={**self.sampling_params.extras, "quality": "exact"}),
            )


T2I_sampling_params = DiffusionSamplingParams(prompt="Doraemon is eating dorayaki", output_size="1024x1024")
T2V_sampling_params = DiffusionSamplingParams(prompt="A curious raccoon")
TI2I_sampling_params = DiffusionSamplingParams(
    prompt="Convert 2D style to 3D style",
    image_path="https://example.com/TI2I_Qwen_Image_Edit_Input.jpg",
)


def _make_ci_case(case_id: str, *, model_path: str, extras: list[str], run_consistency_check: bool = False) -> DiffusionTestCase:
    return DiffusionTestCase(
        case_id,
        DiffusionServerArgs(model_path=model_path, modality="image", extras=extras),
        replace(T2I_sampling_params, output_size="768x768", extras={"num_inference_steps": 12, "seed": 0}),
        run_perf_check=False,
        run_consistency_check=run_consistency_check,
        run_component_accuracy_check=False,
    )


def _with_default_num_gpus(cases: list[DiffusionTestCase], num_gpus: int) -> list[DiffusionTestCase]:
    return [replace(case, server_args=replace(case.server_args, num_gpus=num_gpus)) for case in cases]
