package validate

import (
	"bytes"
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/strata-dev/strata/state"
)

// PrependListItem adds item (one line of YAML, a flow mapping such as
// `{glob: "a", schema: "b"}`) as the first element of the block list under
// the top-level key of a YAML mapping document, editing the text so every
// other byte — comments, order, spacing, an anchor or a tag on the list —
// stays as it was. A missing or empty key gets a new list. Any other form
// (a flow list `key: [...]`, an alias, a document that is not a mapping) is
// refused with a state.Problem (no Path) at the value's line and column: the
// caller asks the user to edit by hand.
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
	if root.Kind != yaml.MappingNode || root.Style&yaml.FlowStyle != 0 {
		return nil, state.Problem{Line: root.Line, Col: root.Column, Pointer: "/",
			Message: "the document is not a block mapping (one key a line), the only form an item is added to"}
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Value != key {
			continue
		}
		refuse := func(form string) error {
			return state.Problem{Line: v.Line, Col: v.Column, Pointer: "/" + key,
				Message: fmt.Sprintf("%s is %s, and an item is added only to a block list (one \"- \" item a line) or an empty %s", key, form, key)}
		}
		switch {
		case v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null" && v.Value == "" && v.Style&yaml.TaggedStyle == 0:
			return insertLine(data, k.Line, "  - "+item, nl), nil
		case v.Kind == yaml.SequenceNode && v.Style&yaml.FlowStyle == 0 && len(v.Content) > 0:
			at, indent, ok := firstDash(data, k.Line, v.Content[0].Line)
			if !ok {
				return nil, refuse("a block list laid out in a way this edit does not follow")
			}
			return insertLine(data, at, indent+"- "+item, nl), nil // above the first item and its comments
		case v.Kind == yaml.SequenceNode && v.Style&yaml.FlowStyle != 0:
			return nil, refuse("a flow list ([...])")
		case v.Kind == yaml.AliasNode:
			return nil, refuse("an alias (*" + v.Value + ")")
		}
		return nil, refuse("not a list")
	}
	return appendKey(), nil
}

// firstDash finds the "- " of a block list's first item, on a line after
// the key's (line keyLine) and not after the first item's (itemLine): its
// indent, and the line after which a new first item goes — the key's line,
// or the line of the list's anchor or tag when they stand on a line of
// their own, so the new item comes above the first one's comments.
func firstDash(data []byte, keyLine, itemLine int) (after int, indent string, ok bool) {
	lines := bytes.Split(data, []byte("\n"))
	after = keyLine
	for n := keyLine + 1; n <= itemLine && n <= len(lines); n++ {
		l := bytes.TrimRight(lines[n-1], "\r")
		rest := bytes.TrimLeft(l, " ")
		switch {
		case len(rest) == 0 || rest[0] == '#':
			continue
		case rest[0] == '-' && (len(rest) == 1 || rest[1] == ' '):
			return after, string(l[:len(l)-len(rest)]), true
		}
		after = n // an anchor or a tag on its own line
	}
	return 0, "", false
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
