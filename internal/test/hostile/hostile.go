// Package hostile puts a hostile value into every string of a spec, one at a time, so that a
// builder test can show each one stays inert: no shell runs it, and no configuration file
// gains a line, a key or an element from it.
package hostile

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
)

// Marker is in Value, to find where it went.
const Marker = "HOSTILE"

// Value is what a hostile user could write into any string field: quotes, command
// substitution, backquotes, a shell separator, a newline that would start a configuration line
// or a YAML key, and XML markup that would close a property and open another.
const Value = Marker + `'"$(touch /tmp/` + Marker + ")`id`;x\nhostile.injected: true\n" +
	"</value></property><property><name>hostile.injected</name><value>x"

// Field is one string reachable in a value, and how to set it.
type Field struct {
	Path string
	Set  func(string)
}

// Fields lists the strings reachable from v (a pointer): string fields, including named
// string types, non-nil string pointers, string elements of slices and string values of
// maps, inside structs, pointers, slices and maps. Nil pointers are not followed, so a
// fully populated sample reaches the most. The order is stable, so the i-th field of two
// copies of a value is the same field.
func Fields(v any) []Field {
	var out []Field
	walk(reflect.ValueOf(v).Elem(), "", &out)
	return out
}

func walk(v reflect.Value, path string, out *[]Field) {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			*out = append(*out, Field{Path: path, Set: func(s string) { v.SetString(s) }})
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walk(v.Elem(), path, out)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			if t.Field(i).IsExported() {
				walk(v.Field(i), path+"."+t.Field(i).Name, out)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i), out)
		}
	case reflect.Map:
		if v.Type().Elem().Kind() != reflect.String || v.Type().Key().Kind() != reflect.String {
			return
		}
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int {
			switch {
			case a.String() < b.String():
				return -1
			case a.String() > b.String():
				return 1
			}
			return 0
		})
		for _, k := range keys {
			*out = append(*out, Field{Path: fmt.Sprintf("%s[%s]", path, k.String()), Set: func(s string) {
				v.SetMapIndex(k, reflect.ValueOf(s).Convert(v.Type().Elem()))
			}})
		}
	}
}

// Inert reports how a hostile value escaped into what a builder rendered: a shell script
// (the argument after -c of sh or bash) that holds the marker, or a configuration file that
// gained lines, YAML keys or XML elements against the benign rendering. files maps a file name
// to its benign and hostile contents; commands are every container's command and arguments.
func Inert(commands [][]string, benign, got map[string]string) []string {
	var out []string
	for _, argv := range commands {
		for i := 0; i+1 < len(argv); i++ {
			if (argv[i] == "-c" || argv[i] == "-ec") && i > 0 && shell(argv[i-1]) && containsMarker(argv[i+1]) {
				out = append(out, fmt.Sprintf("reaches the shell script of %v", argv[:i]))
			}
		}
	}
	for name, b := range benign {
		g, ok := got[name]
		if !ok {
			continue
		}
		if why := structureChanged(name, b, g); why != "" {
			out = append(out, name+": "+why)
		}
	}
	return out
}

func shell(arg string) bool {
	return slices.Contains([]string{"sh", "bash", "/bin/sh", "/bin/bash"}, arg)
}

// Rendered is what a builder made of a spec: every container's command and arguments, and
// its configuration files by name.
type Rendered struct {
	Commands [][]string
	Files    map[string]string
}

// Each sets Value into every string of the spec of a fresh copy of a sample, one string at a
// time, renders the copy and reports each way the value escaped as a test error. fresh returns
// a new copy and the spec inside it to walk; render returns an error when the builders refuse
// the value, which is inert too. It returns how many strings it tried and how many were
// refused; the benign rendering must succeed.
func Each[T any](t *testing.T, fresh func() (T, any), render func(T) (Rendered, error)) (tried, refused int) {
	t.Helper()
	sample, spec := fresh()
	benign, err := render(sample)
	if err != nil {
		t.Fatalf("the sample itself does not render: %v", err)
	}
	for i := range Fields(spec) {
		obj, spec := fresh()
		f := Fields(spec)[i]
		f.Set(Value)
		tried++
		got, err := renderSafely(render, obj)
		if err != nil {
			refused++
			continue
		}
		for _, why := range Inert(got.Commands, benign.Files, got.Files) {
			t.Errorf("spec%s %s", f.Path, why)
		}
	}
	return tried, refused
}

// renderSafely turns a builder's panic into a failure that names it.
func renderSafely[T any](render func(T) (Rendered, error), obj T) (r Rendered, err error) {
	defer func() {
		if p := recover(); p != nil {
			panic(fmt.Sprintf("builder panicked on a hostile value: %v", p))
		}
	}()
	return render(obj)
}
