package syncer

import "testing"

// linesDropped counts repeated lines (a line the local version holds twice
// is dropped when the taken version holds it once, though its text is
// still there) and ignores a CR before the line end; a taken version
// holding every local line drops nothing.
func TestLinesDropped(t *testing.T) {
	for _, c := range []struct {
		ours, taken string
		want        bool
	}{
		{"# M\n- a\n- b\n", "# M\n- a\n- b\n- c\n", false}, // a superset: nothing lost
		{"# M\n- a\n- b\n", "# M\n- a\n", true},
		{"# M\n\n## A\n- x\n\n## B\n- x\n", "# M\n\n## A\n- x\n\n## B\n", true}, // "- x" twice, kept once
		{"# M\r\n- a\r\n", "# M\n- a\n", false},
		{"", "", false},
	} {
		if got := linesDropped([]byte(c.ours), []byte(c.taken)); got != c.want {
			t.Errorf("linesDropped(%q, %q) = %v, want %v", c.ours, c.taken, got, c.want)
		}
	}
}
