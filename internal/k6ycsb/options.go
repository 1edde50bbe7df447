package k6ycsb

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/grafana/sobek"
)

// decode fills dst (a pointer to a struct with js tags) from a JavaScript object, refusing
// keys the struct does not have: a misspelt option must not silently fall back to a default.
func decode(rt *sobek.Runtime, what string, v sobek.Value, dst any) error {
	if v == nil || sobek.IsUndefined(v) || sobek.IsNull(v) {
		return nil
	}
	obj := v.ToObject(rt)
	known := jsNames(reflect.TypeOf(dst).Elem())
	for _, k := range obj.Keys() {
		if !slices.Contains(known, k) {
			return fmt.Errorf("%s: unknown option %q; the options are %s", what, k, strings.Join(known, ", "))
		}
	}
	if err := rt.ExportTo(v, dst); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

func jsNames(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		if n := t.Field(i).Tag.Get("js"); n != "" {
			names = append(names, n)
		}
	}
	return names
}
