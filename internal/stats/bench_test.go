package stats

import (
	"fmt"
	"testing"
)

// The analysis reruns on every reconcile of a running study: what does it cost per cell?
func BenchmarkCompare(b *testing.B) {
	for _, n := range []int{5, 20, 50} {
		base, cell := make([]float64, n), make([]float64, n)
		for i := range n {
			base[i], cell[i] = 1000+float64(i*7%13), 800+float64(i*5%11)+0.5
		}
		b.Run(fmt.Sprintf("%dv%d", n, n), func(b *testing.B) {
			for b.Loop() {
				Compare(base, cell)
			}
		})
	}
}
