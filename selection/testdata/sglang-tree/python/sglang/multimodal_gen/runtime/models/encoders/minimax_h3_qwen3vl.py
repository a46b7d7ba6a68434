import sglang.multimodal_gen.configs.models.encoders.qwen3vl
import sglang.multimodal_gen.runtime.models.encoders.qwen3vl
