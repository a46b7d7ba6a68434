import sglang.srt.layers.moe.topk
