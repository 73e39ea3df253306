package validate

import (
	"bytes"
	"fmt"
	"reflect"

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
// caller asks the user to edit by hand. Lines are counted as the YAML
// library counts them (lineSpans), and the edit is parsed again before it
// is returned: unless the list reads as the item followed by the old items
// and nothing else changed, it is refused too, never written in another
// place.
func PrependListItem(data []byte, key, item string) ([]byte, error) {
	out, err := prependListItem(data, key, item)
	if err != nil {
		return nil, err
	}
	if err := checkPrepended(data, out, key, item); err != nil {
		return nil, err
	}
	return out, nil
}

func prependListItem(data []byte, key, item string) ([]byte, error) {
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
	lines := lineSpans(data)
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Value != key {
			continue
		}
		refuse := func(form string) error {
			return state.Problem{Line: v.Line, Col: v.Column, Pointer: "/" + key,
				Message: fmt.Sprintf("%s is %s, and an item is added only to a block list (one \"- \" item a line) or an empty %s", key, form, key)}
		}
		insert := func(after int, text string) ([]byte, error) {
			out, ok := insertLine(data, lines, after, text, nl)
			if !ok {
				return nil, state.Problem{Line: after, Col: 1, Pointer: "/" + key,
					Message: fmt.Sprintf("line %d ends in a line break other than \"\\n\" (\"\\r\", U+0085, U+2028 or U+2029), which YAML counts as a line and this edit does not insert after", after)}
			}
			return out, nil
		}
		switch {
		case v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null" && v.Value == "" && v.Style&yaml.TaggedStyle == 0:
			return insert(k.Line, "  - "+item)
		case v.Kind == yaml.SequenceNode && v.Style&yaml.FlowStyle == 0 && len(v.Content) > 0:
			at, indent, ok := firstDash(data, lines, k.Line, v.Content[0].Line)
			if !ok {
				return nil, refuse("a block list laid out in a way this edit does not follow")
			}
			return insert(at, indent+"- "+item) // above the first item and its comments
		case v.Kind == yaml.SequenceNode && v.Style&yaml.FlowStyle != 0:
			return nil, refuse("a flow list ([...])")
		case v.Kind == yaml.AliasNode:
			return nil, refuse("an alias (*" + v.Value + ")")
		}
		return nil, refuse("not a list")
	}
	return appendKey(), nil
}

// checkPrepended checks the edit: out, parsed, is data with item made the
// first element of key's list, and nothing else changed.
func checkPrepended(data, out []byte, key, item string) error {
	var before, after map[string]any
	var it []any
	if yaml.Unmarshal(data, &before) != nil || yaml.Unmarshal(out, &after) != nil ||
		yaml.Unmarshal([]byte("- "+item), &it) != nil || len(it) != 1 {
		return state.Problem{Pointer: "/" + key, Message: "the edited file does not read back as a YAML mapping"}
	}
	old, _ := before[key].([]any)
	if before == nil {
		before = map[string]any{}
	}
	before[key] = append([]any{it[0]}, old...)
	if !reflect.DeepEqual(before, after) {
		return state.Problem{Pointer: "/" + key, Message: fmt.Sprintf("the edited file does not read back as the item first in %s and all else as it was", key)}
	}
	return nil
}

// span is one line of a YAML text: data[start:end] is its text without
// its line break, next where the next line starts.
type span struct{ start, end, next int }

// lineSpans splits data into lines as yaml.v3 counts them (Node.Line is
// the 1-based index): a line ends at "\r\n", "\r", "\n", NEL (U+0085),
// LS (U+2028) or PS (U+2029) — not only at "\n": a U+2028 ending a comment
// above files: made the "first" rule land second, under a broader rule
// (attack34 L2).
func lineSpans(data []byte) []span {
	var ls []span
	start := 0
	for i := 0; i < len(data); {
		w := 0
		switch {
		case data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n':
			w = 2
		case data[i] == '\r' || data[i] == '\n':
			w = 1
		case data[i] == 0xC2 && i+1 < len(data) && data[i+1] == 0x85:
			w = 2
		case data[i] == 0xE2 && i+2 < len(data) && data[i+1] == 0x80 && (data[i+2] == 0xA8 || data[i+2] == 0xA9):
			w = 3
		default:
			i++
			continue
		}
		ls = append(ls, span{start, i, i + w})
		i += w
		start = i
	}
	return append(ls, span{start, len(data), len(data)})
}

// firstDash finds the "- " of a block list's first item, on a line after
// the key's (line keyLine) and not after the first item's (itemLine): its
// indent, and the line after which a new first item goes — the key's line,
// or the line of the list's anchor or tag when they stand on a line of
// their own, so the new item comes above the first one's comments.
func firstDash(data []byte, lines []span, keyLine, itemLine int) (after int, indent string, ok bool) {
	after = keyLine
	for n := keyLine + 1; n <= itemLine && n <= len(lines); n++ {
		l := data[lines[n-1].start:lines[n-1].end]
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

// insertLine inserts text as a new line after line n (1-based, as
// lineSpans counts; 0 inserts at the top). ok is false when line n ends in
// a break other than "\n" (a lone "\r", NEL, LS, PS): text put after it
// would share a line with it for a reader that counts "\n" alone.
func insertLine(data []byte, lines []span, n int, text string, nl []byte) (out []byte, ok bool) {
	off := 0
	if n > 0 {
		if n > len(lines) {
			n = len(lines)
		}
		off = lines[n-1].next
		if off > lines[n-1].end && data[off-1] != '\n' {
			return nil, false
		}
	}
	out = append(out, data[:off]...)
	if off > 0 && data[off-1] != '\n' { // the last line, with no break
		out = append(out, nl...)
	}
	out = append(out, text...)
	out = append(out, nl...)
	return append(out, data[off:]...), true
}
