package hostile

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

func containsMarker(s string) bool { return strings.Contains(s, Marker) }

// structureChanged compares a configuration file's shape in its benign and hostile renderings:
// YAML top-level keys, XML elements, or else lines.
func structureChanged(name, benign, got string) string {
	switch {
	case strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml"):
		var b, g map[string]any
		if err := yaml.Unmarshal([]byte(got), &g); err != nil {
			return "no longer parses as YAML: " + err.Error()
		}
		if err := yaml.Unmarshal([]byte(benign), &b); err != nil {
			return ""
		}
		if bk, gk := keys(b), keys(g); !slices.Equal(bk, gk) {
			return fmt.Sprintf("top-level keys changed: %v became %v", bk, gk)
		}
	case strings.HasSuffix(name, ".xml"):
		be, _ := elements(benign)
		ge, err := elements(got)
		if err != nil {
			return "no longer parses as XML: " + err.Error()
		}
		if be != ge {
			return fmt.Sprintf("%d XML elements became %d", be, ge)
		}
	default:
		if b, g := strings.Count(benign, "\n"), strings.Count(got, "\n"); b != g {
			return fmt.Sprintf("%d lines became %d", b, g)
		}
	}
	return ""
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func elements(doc string) (int, error) {
	d := xml.NewDecoder(strings.NewReader(doc))
	n := 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if _, ok := tok.(xml.StartElement); ok {
			n++
		}
	}
}
