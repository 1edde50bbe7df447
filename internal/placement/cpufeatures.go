// Package placement maps CPU crypto features to node labels and scheduling rules.
package placement

import (
	"bufio"
	"io"
	"slices"
	"strings"
)

// LabelPrefix is Node Feature Discovery's prefix for CPUID features; we write the same keys so
// that placement works the same with NFD installed or with our labeller.
const LabelPrefix = "feature.node.kubernetes.io/cpu-cpuid."

// HideFeaturesLabel, set by a person on a node, hides features from the labeller, e.g.
// "AESNI.VAES": the node then looks like a CPU without them, for experiments. HiddenFeaturesLabel
// is written by the labeller so the pretence is never silent.
const (
	HideFeaturesLabel   = "crypto.secured.dev/hide-features"
	HiddenFeaturesLabel = "crypto.secured.dev/hidden-features"
)

// cpuinfoFlags maps /proc/cpuinfo flag names (Linux) to NFD feature names (klauspost/cpuid).
var cpuinfoFlags = map[string]string{
	"aes":        "AESNI",
	"vaes":       "VAES",
	"pclmulqdq":  "CLMUL",
	"vpclmulqdq": "VPCLMULQDQ",
	"gfni":       "GFNI",
	"sha_ni":     "SHA",
	"avx2":       "AVX2",
	"avx512f":    "AVX512F",
}

// Features reads the crypto-relevant features of the first CPU in a /proc/cpuinfo, sorted.
func Features(cpuinfo io.Reader) []string {
	s := bufio.NewScanner(cpuinfo)
	s.Buffer(make([]byte, 64*1024), 1024*1024)
	for s.Scan() {
		key, value, ok := strings.Cut(s.Text(), ":")
		if !ok || strings.TrimSpace(key) != "flags" {
			continue
		}
		var out []string
		for _, f := range strings.Fields(value) {
			if name, ok := cpuinfoFlags[f]; ok {
				out = append(out, name)
			}
		}
		slices.Sort(out)
		return out
	}
	return nil
}

// Labels are the node labels the labeller owns for the given features, minus those the node's
// HideFeaturesLabel value hides; hidden ones are named in HiddenFeaturesLabel.
func Labels(features []string, hide string) map[string]string {
	hidden := strings.FieldsFunc(hide, func(r rune) bool { return r == '.' || r == ',' || r == ' ' })
	labels := map[string]string{}
	var actuallyHidden []string
	for _, f := range features {
		if slices.Contains(hidden, f) {
			actuallyHidden = append(actuallyHidden, f)
			continue
		}
		labels[LabelPrefix+f] = "true"
	}
	if len(actuallyHidden) > 0 {
		labels[HiddenFeaturesLabel] = strings.Join(actuallyHidden, ".")
	}
	return labels
}
