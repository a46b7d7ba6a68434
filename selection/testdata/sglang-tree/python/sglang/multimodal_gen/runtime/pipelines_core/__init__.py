import sglang.multimodal_gen.registry
