package controllers

import (
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func itoa(i int32) string { return strconv.Itoa(int(i)) }

// joinSentences joins messages for a condition, each ending with a full stop.
func joinSentences(msgs []string) string {
	var b strings.Builder
	for i, m := range msgs {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(strings.TrimSuffix(m, "."))
		b.WriteString(".")
	}
	return b.String()
}

func fieldPath(name string, more ...string) *field.Path { return field.NewPath(name, more...) }
