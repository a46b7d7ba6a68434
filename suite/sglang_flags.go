// Code generated from SGLang's server_args.py add_argument calls. DO NOT EDIT.

// Source: python/sglang/multimodal_gen/runtime/server_args/server_args.py,
// ServerArgs.add_cli_args, upstream as of 2026-08-17 (commit e21cc732b56f, the AsherBond/sglang
// mirror). Regenerate from a newer server_args.py rather than editing by hand.

package suite

// sglangValueFlags are the options of `sglang serve` that take one value whose type argparse
// converts (int or float) or whose choices are a literal list: a value argparse refuses
// stops the server at once ("argument --num-gpus: invalid int value"). Options with nargs
// or an action, and choices computed at run time, are not listed.
var sglangValueFlags = []sglangFlag{
	{Names: []string{"--base-gpu-id"}, Type: "int", Choices: nil},                                              // server_args.py:1822
	{Names: []string{"--batching-delay-ms"}, Type: "float", Choices: nil},                                      // server_args.py:2337
	{Names: []string{"--batching-max-size"}, Type: "int", Choices: nil},                                        // server_args.py:2331
	{Names: []string{"--batching-mode"}, Type: "str", Choices: []string{"dynamic"}},                            // server_args.py:2324
	{Names: []string{"--cfg-parallel-size"}, Type: "int", Choices: nil},                                        // server_args.py:1919
	{Names: []string{"--data-parallel-size", "--dp-size", "--dp"}, Type: "int", Choices: nil},                  // server_args.py:1930
	{Names: []string{"--dist-timeout"}, Type: "int", Choices: nil},                                             // server_args.py:1952
	{Names: []string{"--dit-layerwise-resident-layers"}, Type: "float", Choices: nil},                          // server_args.py:2144
	{Names: []string{"--dit-offload-prefetch-size"}, Type: "float", Choices: nil},                              // server_args.py:2138
	{Names: []string{"--encoder-parallel"}, Type: "str", Choices: []string{"auto", "fold", "dp", "replicate"}}, // server_args.py:1884
	{Names: []string{"--hsdp-replicate-dim"}, Type: "int", Choices: nil},                                       // server_args.py:1940
	{Names: []string{"--hsdp-shard-dim"}, Type: "int", Choices: nil},                                           // server_args.py:1946
	{Names: []string{"--kv-cache-quant"}, Type: "str", Choices: []string{"off", "int4", "int2"}},               // server_args.py:2219
	{Names: []string{"--kv-cache-quant-block-size"}, Type: "int", Choices: nil},                                // server_args.py:2235
	{Names: []string{"--kv-cache-quant-centroids"}, Type: "int", Choices: nil},                                 // server_args.py:2229
	{Names: []string{"--kv-cache-quant-iters"}, Type: "int", Choices: nil},                                     // server_args.py:2247
	{Names: []string{"--kv-cache-quant-keep-recent"}, Type: "int", Choices: nil},                               // server_args.py:2259
	{Names: []string{"--kv-cache-quant-sink"}, Type: "int", Choices: []string{"0", "1"}},                       // server_args.py:2265
	{Names: []string{"--kv-cache-quant-sink-keep"}, Type: "int", Choices: nil},                                 // server_args.py:2272
	{Names: []string{"--kv-cache-quant-stages"}, Type: "int", Choices: nil},                                    // server_args.py:2241
	{Names: []string{"--kv-gather-degree"}, Type: "int", Choices: nil},                                         // server_args.py:1899
	{Names: []string{"--log-requests-format"}, Type: "str", Choices: []string{"text", "json"}},                 // server_args.py:2489
	{Names: []string{"--log-requests-level"}, Type: "int", Choices: []string{"0", "1", "2", "3"}},              // server_args.py:2478
	{Names: []string{"--lora-alpha"}, Type: "int", Choices: nil},                                               // server_args.py:2422
	{Names: []string{"--lora-scale"}, Type: "float", Choices: nil},                                             // server_args.py:2416
	{Names: []string{"--master-port"}, Type: "int", Choices: nil},                                              // server_args.py:2312
	{Names: []string{"--minimax-h3-adaln-plan-width"}, Type: "int", Choices: nil},                              // server_args.py:1683
	{Names: []string{"--nnodes"}, Type: "int", Choices: nil},                                                   // server_args.py:1829
	{Names: []string{"--node-rank"}, Type: "int", Choices: nil},                                                // server_args.py:1837
	{Names: []string{"--num-gpus"}, Type: "int", Choices: nil},                                                 // server_args.py:1816
	{Names: []string{"--port"}, Type: "int", Choices: nil},                                                     // server_args.py:2365
	{Names: []string{"--ring-degree"}, Type: "int", Choices: nil},                                              // server_args.py:1878
	{Names: []string{"--scheduler-port"}, Type: "int", Choices: nil},                                           // server_args.py:2318
	{Names: []string{"--scheduler-rpc-timeout"}, Type: "int", Choices: nil},                                    // server_args.py:1959
	{Names: []string{"--sp-degree"}, Type: "int", Choices: nil},                                                // server_args.py:1866
	{Names: []string{"--srt-encoder-connection-timeout"}, Type: "int", Choices: nil},                           // server_args.py:2535
	{Names: []string{"--srt-encoder-timeout"}, Type: "int", Choices: nil},                                      // server_args.py:2542
	{Names: []string{"--tp-size"}, Type: "int", Choices: nil},                                                  // server_args.py:1860
	{Names: []string{"--ulysses-degree"}, Type: "int", Choices: nil},                                           // server_args.py:1872
	{Names: []string{"--warmup-steps"}, Type: "int", Choices: nil},                                             // server_args.py:2068
	{Names: []string{"--webui-port"}, Type: "int", Choices: nil},                                               // server_args.py:2384
}
