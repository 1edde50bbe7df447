package placement

import (
	"reflect"
	"strings"
	"testing"
)

const cpuinfo = `processor	: 0
vendor_id	: GenuineIntel
flags		: fpu vme sse2 pclmulqdq ssse3 aes avx avx2 sha_ni avx512f vaes vpclmulqdq gfni
processor	: 1
flags		: fpu
`

func TestFeaturesReadsTheFirstCPU(t *testing.T) {
	got := Features(strings.NewReader(cpuinfo))
	want := []string{"AESNI", "AVX2", "AVX512F", "CLMUL", "GFNI", "SHA", "VAES", "VPCLMULQDQ"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Features = %v, want %v", got, want)
	}
	if got := Features(strings.NewReader("processor : 0\n")); got != nil {
		t.Errorf("no flags line: %v", got)
	}
}

func TestLabelsHideOnlyWhatIsAskedAndSaySo(t *testing.T) {
	got := Labels([]string{"AESNI", "CLMUL", "VAES"}, "AESNI.VAES.SHA")
	want := map[string]string{
		LabelPrefix + "CLMUL": "true",
		HiddenFeaturesLabel:   "AESNI.VAES", // SHA is not on this CPU, so nothing hides it
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Labels = %v, want %v", got, want)
	}
	if got := Labels([]string{"AESNI"}, ""); !reflect.DeepEqual(got, map[string]string{LabelPrefix + "AESNI": "true"}) {
		t.Errorf("no override: %v", got)
	}
}
