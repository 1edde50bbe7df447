package placement

import (
	"bufio"
	"io"
	"strconv"
	"strings"
)

// KernelAESLabel says whether the node's kernel encrypts with AES instructions ("accelerated")
// or in software ("generic"): what an encrypted volume (atRest.volume, fscrypt's AES-256-XTS)
// costs depends on it far more than on the CPU's flags, since a kernel without its AES module
// (aesni_intel, aes-ce) runs the generic cipher on a CPU that has the instructions. Select nodes
// with spec.placement.nodeSelector on it.
const KernelAESLabel = "crypto.secured.dev/kernel-aes"

// genericAES are the kernel's software AES implementations, by driver name.
var genericAES = []string{"aes-generic", "aes-fixed-time", "aes-lib"}

// KernelAES reads a /proc/crypto and names the driver the kernel picks for AES-XTS (the
// highest priority), or for plain AES when no XTS instance is registered yet (the kernel makes
// the xts template's instances on first use), and whether it is accelerated. driver is empty
// when the kernel lists no AES at all.
func KernelAES(procCrypto io.Reader) (driver string, accelerated bool) {
	best := map[string]int{} // name → priority of the chosen driver
	chosen := map[string]string{}
	s := bufio.NewScanner(procCrypto)
	var name, drv string
	priority := -1
	flush := func() {
		if (name == "xts(aes)" || name == "aes") && drv != "" {
			if p, ok := best[name]; !ok || priority > p {
				best[name], chosen[name] = priority, drv
			}
		}
		name, drv, priority = "", "", -1
	}
	for s.Scan() {
		key, value, ok := strings.Cut(s.Text(), ":")
		if !ok {
			flush() // a blank line ends an entry
			continue
		}
		switch value = strings.TrimSpace(value); strings.TrimSpace(key) {
		case "name":
			flush()
			name = value
		case "driver":
			drv = value
		case "priority":
			priority, _ = strconv.Atoi(value)
		}
	}
	flush()
	driver = chosen["xts(aes)"]
	if driver == "" {
		driver = chosen["aes"]
	}
	if driver == "" {
		return "", false
	}
	for _, g := range genericAES {
		if strings.Contains(driver, g) {
			return driver, false
		}
	}
	return driver, true
}

// KernelAESValue is KernelAESLabel's value for KernelAES's answer; empty (no label) when the
// kernel lists no AES.
func KernelAESValue(driver string, accelerated bool) string {
	switch {
	case driver == "":
		return ""
	case accelerated:
		return "accelerated"
	}
	return "generic"
}
