module github.com/diffusion-check/diffusion-check

go 1.26.8
