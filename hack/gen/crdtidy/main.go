// Command crdtidy reflows the field descriptions of generated CRDs: controller-gen keeps the
// line breaks of wrapped Go comments, which `kubectl explain` then prints mid-sentence. Single
// line breaks become spaces; blank lines (paragraphs) and indented lines (lists) stay.
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"go.yaml.in/yaml/v3"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: crdtidy DIR")
		os.Exit(2)
	}
	files, err := filepath.Glob(filepath.Join(os.Args[1], "*.yaml"))
	if err != nil || len(files) == 0 {
		fmt.Fprintln(os.Stderr, "crdtidy: no CRDs in", os.Args[1])
		os.Exit(1)
	}
	for _, f := range files {
		if err := tidy(f); err != nil {
			fmt.Fprintf(os.Stderr, "crdtidy: %s: %v\n", f, err)
			os.Exit(1)
		}
	}
}

func tidy(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return err
	}
	reflowDescriptions(&doc)
	var b bytes.Buffer
	b.WriteString("---\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// A newline between two non-blank lines, unless the next line starts a list item or is indented.
var softBreak = regexp.MustCompile(`([^\n])\n([^\n\s-])`)

func reflowDescriptions(n *yaml.Node) {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "description" && v.Kind == yaml.ScalarNode {
				v.Value = softBreak.ReplaceAllString(v.Value, "$1 $2")
				v.Style = 0
			}
		}
	}
	for _, c := range n.Content {
		reflowDescriptions(c)
	}
}
