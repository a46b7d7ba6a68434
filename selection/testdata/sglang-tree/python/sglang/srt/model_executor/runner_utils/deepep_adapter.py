import sglang.srt.layers.moe.token_dispatcher.deepep
