// Package sglangcases reads SGLang's diffusion test cases from SGLang's own registry
// (python/sglang/multimodal_gen/test/server/gpu_cases.py) by running SGLang's interpreter on
// it (Export, with the embedded exporter.py), and writes them as a diffusion-check suite whose
// servers, requests and checks are the ones SGLang's harness uses (Write).
package sglangcases
