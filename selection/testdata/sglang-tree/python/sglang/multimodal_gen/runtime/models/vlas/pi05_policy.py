import sglang.multimodal_gen.runtime.vla.cuda_graph
