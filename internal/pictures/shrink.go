package pictures

import (
	"bytes"
	"fmt"
	"image"
	"image/png"

	"golang.org/x/image/draw"
)

// maxPixels bounds the pictures Shrink decodes: a failure picture is three panels of at most
// maxPanel pixels across; a file claiming more is not one, and is not decoded (a PNG of a
// few KiB may claim gigapixels).
const maxPixels = 16 << 20

// minShrinkWidth is the narrowest Shrink goes while looking for a size under maxBytes.
const minShrinkWidth = 240

// Shrink makes a failure picture (a PNG, which may come from an artifact a pull request
// wrote) fit for a pull request comment: at most maxWidth pixels across, and at most
// maxBytes as PNG, scaled down further (by 0.7 at a time) while it is larger. It is
// re-encoded in every case, so what comes out is a PNG this process drew.
func Shrink(data []byte, maxWidth, maxBytes int) ([]byte, error) {
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("shrink picture: not a PNG: %w", err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width*cfg.Height > maxPixels {
		return nil, fmt.Errorf("shrink picture: %dx%d pixels, want at most %d", cfg.Width, cfg.Height, maxPixels)
	}
	src, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("shrink picture: %w", err)
	}
	w := min(cfg.Width, maxWidth)
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	for {
		h := max(1, cfg.Height*w/cfg.Width)
		dst := image.NewRGBA(image.Rect(0, 0, w, h))
		draw.CatmullRom.Scale(dst, dst.Bounds(), src, src.Bounds(), draw.Src, nil)
		var b bytes.Buffer
		if err := enc.Encode(&b, dst); err != nil {
			return nil, fmt.Errorf("shrink picture: encode: %w", err)
		}
		if b.Len() <= maxBytes {
			return b.Bytes(), nil
		}
		if w <= minShrinkWidth {
			return nil, fmt.Errorf("shrink picture: %d bytes at %d pixels across, want at most %d", b.Len(), w, maxBytes)
		}
		w = max(minShrinkWidth, w*7/10)
	}
}
