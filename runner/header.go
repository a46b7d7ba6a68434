package runner

import (
	"image"
	_ "image/jpeg" // DecodeConfig reads JPEG headers
	_ "image/png"  // and PNG headers
	"os"

	_ "golang.org/x/image/webp" // and WebP headers

	"github.com/diffusion-check/diffusion-check/internal/media"
	"github.com/diffusion-check/diffusion-check/suite"
)

// headerShapeProblems reads an image output's size from its header (image.DecodeConfig:
// PNG, JPEG, WebP) and names what is wrong when it is not the size the case asked for: a
// 16000×16000 PNG returned for a 64×64 request is then failed without being decoded (ffprobe
// decodes every pixel: 768 MB and 3 s for that one). Nil when the size is right or the header
// does not tell (the decode then decides). w and h are the header's size, 0 when unread.
func headerShapeProblems(c *suite.Case, path string) (problems []string, w, h int) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, 0
	}
	defer f.Close() //nolint:errcheck // opened read-only: nothing written to lose
	cfg, _, err := image.DecodeConfig(f)
	if err != nil {
		return nil, 0, 0
	}
	// The codec the case asks for: only the size is judged here, the decode judges the rest.
	info := media.Info{Width: cfg.Width, Height: cfg.Height, Frames: 1, Codec: imageCodec(c.Request.OutputFormat)}
	return shapeProblems(c, info), cfg.Width, cfg.Height
}
