import sglang.multimodal_gen.runtime.layers.layernorm
