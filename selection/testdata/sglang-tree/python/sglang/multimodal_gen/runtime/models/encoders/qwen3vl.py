import sglang.multimodal_gen.runtime.models.encoders.qwen3vl_vision
