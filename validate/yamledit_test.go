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
		{"flow list refused", "files: [{glob: b}]\n", "", "line 1: files is not a block list"},
		{"not a mapping", "- a\n", "", "not a mapping"},
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
