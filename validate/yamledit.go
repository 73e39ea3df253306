package validate

import (
	"bytes"
	"errors"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// PrependListItem adds item (one line of YAML, a flow mapping such as
// `{glob: "a", schema: "b"}`) as the first element of the block list under
// the top-level key of a YAML mapping document, editing the text so every
// other byte — comments, order, spacing — stays as it was. A missing or
// empty key gets a new list. A flow list (`key: [...]`) or a document that
// is not a mapping is refused: the caller asks the user to edit by hand.
func PrependListItem(data []byte, key, item string) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not valid YAML: %w", err)
	}
	nl := []byte("\n")
	if bytes.Contains(data, []byte("\r\n")) {
		nl = []byte("\r\n")
	}
	appendKey := func() []byte {
		out := bytes.Clone(data)
		if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
			out = append(out, nl...)
		}
		out = append(out, key+":"...)
		out = append(out, nl...)
		out = append(out, "  - "+item...)
		return append(out, nl...)
	}
	if len(doc.Content) == 0 {
		return appendKey(), nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, errors.New("the document is not a mapping")
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Value != key {
			continue
		}
		switch {
		case v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null" && v.Value == "":
			return insertLine(data, k.Line, "  - "+item, nl), nil
		case v.Kind == yaml.SequenceNode && v.Style&yaml.FlowStyle == 0 && len(v.Content) > 0:
			indent := bytes.Repeat([]byte(" "), v.Column-1)
			return insertLine(data, k.Line, string(indent)+"- "+item, nl), nil // above the first item and its comments
		}
		return nil, fmt.Errorf("line %d: %s is not a block list", k.Line, key)
	}
	return appendKey(), nil
}

// insertLine inserts text as a new line after line n (1-based; 0 inserts
// at the top).
func insertLine(data []byte, n int, text string, nl []byte) []byte {
	off := 0
	for i := 0; i < n; i++ {
		j := bytes.IndexByte(data[off:], '\n')
		if j < 0 {
			off = len(data)
			break
		}
		off += j + 1
	}
	var out []byte
	out = append(out, data[:off]...)
	if off > 0 && data[off-1] != '\n' {
		out = append(out, nl...)
	}
	out = append(out, text...)
	out = append(out, nl...)
	return append(out, data[off:]...)
}
