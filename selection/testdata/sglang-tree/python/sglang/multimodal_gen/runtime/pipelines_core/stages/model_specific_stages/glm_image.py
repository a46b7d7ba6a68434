import sglang.multimodal_gen.runtime.models.dits.glm_image
