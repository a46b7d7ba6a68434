import sglang.multimodal_gen.runtime.models.vlas.pi05_policy
