"""A stand-in for SGLang's gpu_cases.py: cases built the ways SGLang builds them."""

from dataclasses import replace
from pathlib import Path

from sglang.multimodal_gen.runtime.platforms import current_platform
from sglang.multimodal_gen.test.server.testcase_configs import (
    T2I_sampling_params,
    TI2I_sampling_params,
    DiffusionSamplingParams,
    DiffusionServerArgs,
    DiffusionTestCase,
    _make_ci_case,
    _with_default_num_gpus,
)
from sglang.multimodal_gen.test.test_utils import (
    DEFAULT_QWEN_IMAGE_EDIT_MODEL_NAME_FOR_TEST,
    DEFAULT_SMALL_MODEL_NAME_FOR_TEST,
    DEFAULT_WAN_2_1_T2V_1_3B_MODEL_NAME_FOR_TEST,
)

_CONFIG_DIR = Path(__file__).parent / "configs"

ONE_GPU_CASES: list[DiffusionTestCase] = [
    DiffusionTestCase(
        "zimage_image_t2i",
        DiffusionServerArgs(model_path=DEFAULT_SMALL_MODEL_NAME_FOR_TEST),
    ),
    # built by replace(), with a config file of the checkout on its command line
    DiffusionTestCase(
        "zimage_image_t2i_cache_dit",
        DiffusionServerArgs(
            model_path=DEFAULT_SMALL_MODEL_NAME_FOR_TEST,
            enable_cache_dit=True,
            extras=["--cache-dit-config", str(_CONFIG_DIR / "cache_dit.yaml")],
        ),
        replace(T2I_sampling_params, output_size="512x512", extras={"num_inference_steps": 8, "seed": 0}),
        run_perf_check=False,
        run_consistency_check=False,
        run_models_api_check=False,
    ),
    DiffusionTestCase(
        "wan2_1_t2v_1.3b",
        DiffusionServerArgs(
            model_path=DEFAULT_WAN_2_1_T2V_1_3B_MODEL_NAME_FOR_TEST,
            extras=["--layerwise-resident-layers text_encoder=0.8 --dit-layerwise-resident-layers 20"],
            env_vars={"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"},
        ),
        DiffusionSamplingParams(prompt="A curious raccoon", num_frames=17, fps=16, extras={"enable_teacache": True}),
        perf_repeat_requests=2,
    ),
    DiffusionTestCase(
        "qwen_image_edit_ti2i",
        DiffusionServerArgs(model_path=DEFAULT_QWEN_IMAGE_EDIT_MODEL_NAME_FOR_TEST),
        TI2I_sampling_params,
    ),
    DiffusionTestCase(
        "hunyuan3d_shape_gen",
        DiffusionServerArgs(model_path="tencent/Hunyuan3D-2", modality="3d"),
        DiffusionSamplingParams(prompt="", image_path="https://example.com/hunyuan3d.png"),
        run_consistency_check=False,
    ),
]

# Skipped on AMD, as SGLang skips its ROCm-incompatible cases.
if not current_platform.is_hip():
    ONE_GPU_CASES.append(
        DiffusionTestCase(
            "turbo_wan2_1_t2v_1.3b",
            DiffusionServerArgs(
                model_path="IPostYellow/TurboWan2.1-T2V-1.3B-Diffusers",
                modality="video",
                dit_layerwise_offload=True,
                dit_offload_prefetch_size=0.5,
            ),
        ),
    )

ONE_GPU_MODELOPT_CASES = [
    _make_ci_case(
        "flux1_modelopt_fp8_t2i",
        model_path="black-forest-labs/FLUX.1-dev",
        extras=["--transformer-path", "lmsys/flux1-dev-modelopt-fp8-sglang-transformer"],
        run_consistency_check=True,
    ),
]

ONE_GPU_B200_CASES = ONE_GPU_MODELOPT_CASES

TWO_GPU_CASES = _with_default_num_gpus(
    [
        DiffusionTestCase(
            "wan2_1_t2v_1.3b_2gpu",
            DiffusionServerArgs(
                model_path=DEFAULT_WAN_2_1_T2V_1_3B_MODEL_NAME_FOR_TEST,
                ulysses_degree=2,
                cfg_parallel=True,
            ),
            DiffusionSamplingParams(prompt="A curious raccoon", output_size="832x480", num_frames=9),
        ),
    ],
    2,
)
