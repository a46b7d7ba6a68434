"""Run-to-run nondeterminism of GPU diffusion work, measured for docs/consistency.md.

Not SGLang and not a trained model: a small latent denoiser with random weights (convs,
GroupNorm, bf16 matmuls, scaled-dot-product attention: the kernels a DiT/UNet pipeline
spends its time in), run for STEPS Euler steps from a fixed seed and decoded to an RGB
image, several times in one process (the requests of one warm server) and in a second
process (another server start). Each output is written as a binary PPM; `diffusion-check
compare` measures them against the first. Usage: python3 denoise.py OUTDIR TAG [REQUESTS];
a TAG containing "atomic" adds a float scatter-add (index_add_, which CUDA does with atomics in
no fixed order, as a mixture-of-experts combine does) to every block: a kernel that is not
deterministic run to run.
"""
import os
import sys

import torch
import torch.nn.functional as F

out_dir, tag = sys.argv[1], sys.argv[2]
requests = int(sys.argv[3]) if len(sys.argv) > 3 else 4
STEPS, C, H, W = 20, 320, 64, 64

torch.backends.cudnn.benchmark = True  # as many pipelines set it: algorithm chosen at first call
dev = torch.device("cuda")
g = torch.Generator(device="cpu").manual_seed(0)


def w(*shape, scale=None):
    t = torch.randn(*shape, generator=g) * (scale if scale is not None else shape[-1] ** -0.5)
    return t.to(dev, torch.bfloat16)


conv_in, conv_out = w(C, 4, 3, 3, scale=0.2), w(4, C, 3, 3, scale=0.02)
blocks = [dict(qkv=w(3 * C, C), proj=w(C, C), ff1=w(4 * C, C), ff2=w(C, 4 * C), conv=w(C, C, 3, 3, scale=0.02)) for _ in range(4)]
atomic = "atomic" in tag
route_n = 97
route = torch.randint(0, route_n, (H * W,), generator=g).to(dev)
up1, up2, rgb = w(128, 4, 3, 3, scale=0.3), w(64, 128, 3, 3, scale=0.05), w(3, 64, 3, 3, scale=0.05)


def denoiser(x, t):
    h = F.conv2d(x, conv_in, padding=1)
    for b in blocks:
        n = F.group_norm(h, 32)
        seq = n.flatten(2).transpose(1, 2)  # B, HW, C
        q, k, v = (seq @ b["qkv"].T).chunk(3, dim=-1)
        heads = lambda z: z.view(z.shape[0], -1, 8, C // 8).transpose(1, 2)
        a = F.scaled_dot_product_attention(heads(q), heads(k), heads(v)).transpose(1, 2).reshape(seq.shape)
        seq = seq + a @ b["proj"].T
        seq = seq + F.gelu(seq @ b["ff1"].T) @ b["ff2"].T
        h = h + seq.transpose(1, 2).reshape(h.shape) * (1 - t)
        h = h + F.conv2d(F.silu(h), b["conv"], padding=1)
        if atomic:
            flat = h.flatten(2).transpose(1, 2).reshape(-1, C).float()  # HW, C
            combined = torch.zeros(route_n, C, device=dev).index_add_(0, route, flat)
            h = h + (0.1 / 42) * combined[route].to(h.dtype).reshape(1, H, W, C).permute(0, 3, 1, 2)
    return F.conv2d(F.silu(F.group_norm(h, 32)), conv_out, padding=1)


@torch.no_grad()
def generate():
    x = torch.randn(1, 4, H, W, generator=torch.Generator(device="cpu").manual_seed(42)).to(dev, torch.bfloat16)
    for i in range(STEPS):
        t = 1 - i / STEPS
        x = x - denoiser(x, t) / STEPS
    y = F.interpolate(x, scale_factor=4, mode="nearest")
    y = F.conv2d(F.silu(F.conv2d(y, up1, padding=1)), up2, padding=1)
    y = F.interpolate(F.silu(y), scale_factor=2, mode="bilinear")
    img = torch.tanh(F.conv2d(y, rgb, padding=1).float()) * 0.5 + 0.5
    return (img[0].permute(1, 2, 0).clamp(0, 1) * 255).round().to(torch.uint8).cpu()


for r in range(1, requests + 1):
    img = generate()
    h, w_, _ = img.shape
    with open(os.path.join(out_dir, f"{tag}-request-{r}.ppm"), "wb") as f:
        f.write(b"P6\n%d %d\n255\n" % (w_, h) + img.numpy().tobytes())
print(tag, torch.__version__, torch.cuda.get_device_name(), "requests", requests)
first = open(os.path.join(out_dir, f"{tag}-request-1.ppm"), "rb").read()
for r in range(2, requests + 1):
    other = open(os.path.join(out_dir, f"{tag}-request-{r}.ppm"), "rb").read()
    diff = sum(a != b for a, b in zip(first, other))
    print(f"{tag} request {r} vs 1: {diff} bytes differ")
