package validate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPrependListItem(t *testing.T) {
	const item = `{glob: "a/*.json", schema: "s.json"}`
	for _, c := range []struct{ name, in, want, err string }{
		{"empty file", "", "files:\n  - " + item + "\n", ""},
		{"no files key", "version: 1 # v\nttl: off", "version: 1 # v\nttl: off\nfiles:\n  - " + item + "\n", ""},
		{"empty key keeps its comments", "files:\n#  - glob: x\n# end\nttl: off\n", "files:\n  - " + item + "\n#  - glob: x\n# end\nttl: off\n", ""},
		{"first, above the first item's comment, with its indent",
			"files:\n    # first\n    - glob: b\n      ignore: true\n",
			"files:\n    - " + item + "\n    # first\n    - glob: b\n      ignore: true\n", ""},
		{"CRLF", "version: 1\r\nfiles:\r\n  - {glob: b}\r\n", "version: 1\r\nfiles:\r\n  - " + item + "\r\n  - {glob: b}\r\n", ""},
		// an anchor or a tag on the list stays where it is; the item takes the
		// first item's indent, not the anchor's column (attack23 F14)
		{"anchor", "version: 1\nfiles: &a\n  - glob: x/*.json\n    schema: json\n",
			"version: 1\nfiles: &a\n  - " + item + "\n  - glob: x/*.json\n    schema: json\n", ""},
		{"tag", "files: !!seq\n  # first\n  - {glob: b}\n", "files: !!seq\n  - " + item + "\n  # first\n  - {glob: b}\n", ""},
		{"anchor and tag on their own line", "files:\n  &a !!seq\n  - {glob: b}\n", "files:\n  &a !!seq\n  - " + item + "\n  - {glob: b}\n", ""},
		{"dash at the key's indent", "files:\n- {glob: b}\n", "files:\n- " + item + "\n- {glob: b}\n", ""},
		{"empty with an anchor", "files: &a\nttl: off\n", "files: &a\n  - " + item + "\nttl: off\n", ""},
		// yaml.v3 ends a line at NEL, U+2028 and U+2029 too: one ending a
		// comment above files: is a line of its own, and the item still goes
		// right under files:, first (attack34 L2)
		{"U+2028 ending a comment", "version: 1\n# shared\u2028\nfiles:\n  - {glob: b}\n  - {glob: c}\n",
			"version: 1\n# shared\u2028\nfiles:\n  - " + item + "\n  - {glob: b}\n  - {glob: c}\n", ""},
		{"U+2029 and NEL", "# a\u2029\n# b\u0085\nfiles:\n  # c\u2028\n  - {glob: b}\n",
			"# a\u2029\n# b\u0085\nfiles:\n  - " + item + "\n  # c\u2028\n  - {glob: b}\n", ""},
		{"U+2028 in a quoted value above", "version: 1\nx: \"a\u2028b\"\nfiles:\n  - {glob: b}\n",
			"version: 1\nx: \"a\u2028b\"\nfiles:\n  - " + item + "\n  - {glob: b}\n", ""},
		// a break other than \n ending the line the item would follow:
		// refused, never put on a line a reader counting \n shares with it
		{"U+2028 ending the key's line refused", "files: # c\u2028\n  - {glob: b}\n", "", ":1:1: /files: line 1 ends in a line break other than"},
		{"lone CR refused", "version: 1\rfiles:\r  - {glob: b}\r", "", ":2:1: /files: line 2 ends in a line break other than"},
		// other forms: refused at the value, FILE:LINE:COL once the caller names the file
		{"flow list refused", "files: [{glob: b}]\n", "", ":1:8: /files: files is a flow list ([...]), and an item is added only to a block list"},
		{"empty flow list refused", "version: 1\nfiles: []\n", "", ":2:8: /files: files is a flow list"},
		{"alias refused", "x: &a\n  - {glob: b}\nfiles: *a\n", "", ":3:8: /files: files is an alias (*a)"},
		{"tagged null refused", "files: !!null\n", "", ":1:8: /files: files is not a list"},
		{"not a mapping", "- a\n", "", ":1:1: /: the document is not a block mapping"},
		{"flow mapping", "{files: []}\n", "", ":1:1: /: the document is not a block mapping"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := PrependListItem([]byte(c.in), "files", item)
			if c.err != "" {
				require.ErrorContains(t, err, c.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, string(got))
		})
	}
}

// The edit is parsed again: an item that does not read back first, or a
// change to anything else, is refused (the check that was missing when a
// U+2028 put the item second, attack34 L2).
func TestCheckPrepended(t *testing.T) {
	const item = `{glob: "a", schema: "s"}`
	in := "version: 1\nfiles:\n  - {glob: b}\n"
	require.NoError(t, checkPrepended([]byte(in), []byte("version: 1\nfiles:\n  - "+item+"\n  - {glob: b}\n"), "files", item))
	require.NoError(t, checkPrepended(nil, []byte("files:\n  - "+item+"\n"), "files", item))
	for _, out := range []string{
		"version: 1\nfiles:\n  - {glob: b}\n  - " + item + "\n", // second
		"version: 1\nfiles:\n  - " + item + "\n",                // an item lost
		"version: 2\nfiles:\n  - " + item + "\n  - {glob: b}\n", // another value changed
		"version: 1\nfiles:\n  - " + item + "\n  - {glob: b}\nx: 1\n",
		"version: 1\nfiles:\n- " + item + "\n  - {glob: b}\n", // does not parse
	} {
		assert.Error(t, checkPrepended([]byte(in), []byte(out), "files", item), out)
	}
}
