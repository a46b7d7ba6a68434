//go:build !(goexperiment.simd && amd64)

package checks

// Without the vector kernel there is no vAddRow path to choose (see ssim_simd_amd64_test.go).
func vbmiCases() []bool { return []bool{false} }

func setVBMI(bool) {}
