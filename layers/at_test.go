package layers

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The window ends at 25 KB when that comes before 200 lines: the item cut
// in the middle is partly loaded, the ones after it are not loaded.
func TestWindowBytesFirst(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Memory\n\n## Notes\n")
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&b, "- note %03d %s\n", i, strings.Repeat("x", 290)) // 302 bytes a line
	}
	w := Window("MEMORY.md", []byte(b.String()))
	require.Equal(t, WindowBytes, w.LoadedBytes)
	require.Equal(t, 103, w.Lines)
	require.Less(t, w.LoadedLines, WindowLines)
	require.NotEmpty(t, w.Cut)
	require.True(t, w.Cut[0].Partial)
	require.Contains(t, w.Cut[0].Text, "note 085")
	require.Contains(t, w.Cut[len(w.Cut)-1].Text, "note 100")
	require.Len(t, w.Cut, 16)
}

func TestWindowAllLoaded(t *testing.T) {
	w := Window("MEMORY.md", []byte("# Memory\n- a\n"))
	require.Equal(t, 2, w.LoadedLines)
	require.Empty(t, w.Cut)
}
