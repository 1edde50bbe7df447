package placement

import (
	"strings"
	"testing"
)

// Excerpts of /proc/crypto: this machine's kernel (no aesni_intel: the generic constant-time AES
// under the xts template, on a CPU that has AES-NI) and one with aesni_intel loaded.
const (
	procCryptoGeneric = `name         : xts(aes)
driver       : xts(ecb(aes-fixed-time))
module       : kernel
priority     : 101
type         : skcipher

name         : aes
driver       : aes-fixed-time
module       : kernel
priority     : 101

name         : aes
driver       : aes-generic
module       : kernel
priority     : 100
`
	procCryptoAESNI = `name         : xts(aes)
driver       : xts-aes-aesni
module       : aesni_intel
priority     : 401

name         : xts(aes)
driver       : xts(ecb(aes-generic))
module       : kernel
priority     : 100

name         : aes
driver       : aes-aesni
module       : aesni_intel
priority     : 300
`
	// Before anything used XTS, only the block cipher is listed.
	procCryptoNoXTS = `name         : aes
driver       : aes-aesni
module       : aesni_intel
priority     : 300

name         : aes
driver       : aes-generic
module       : kernel
priority     : 100
`
)

func TestKernelAESNamesTheDriverTheKernelPicks(t *testing.T) {
	for _, tc := range []struct {
		name, procCrypto, driver, label string
	}{
		{"generic XTS on a CPU with AES-NI", procCryptoGeneric, "xts(ecb(aes-fixed-time))", "generic"},
		{"aesni_intel: the highest priority wins", procCryptoAESNI, "xts-aes-aesni", "accelerated"},
		{"no XTS instance yet: the block cipher tells", procCryptoNoXTS, "aes-aesni", "accelerated"},
		{"no AES at all", "name : sha256\ndriver : sha256-generic\npriority : 100\n", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			driver, accelerated := KernelAES(strings.NewReader(tc.procCrypto))
			if driver != tc.driver || KernelAESValue(driver, accelerated) != tc.label {
				t.Errorf("KernelAES = %q (accelerated %t), label %q; want %q, label %q", driver, accelerated, KernelAESValue(driver, accelerated), tc.driver, tc.label)
			}
		})
	}
}
