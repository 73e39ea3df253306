package textdiff

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUnifiedSmall(t *testing.T) {
	a := "{\n  \"type\": \"APEX\",\n  \"phase\": \"plan\"\n}\n"
	b := "{\n  \"type\": \"APEX\",\n  \"phase\": \"implement\"\n}\n"
	got := Unified("a", "b", []byte(a), []byte(b), 3)
	want := "--- a\n+++ b\n@@ -1,4 +1,4 @@\n {\n   \"type\": \"APEX\",\n-  \"phase\": \"plan\"\n+  \"phase\": \"implement\"\n }\n"
	assert.Equal(t, want, got)
	assert.Equal(t, "", Unified("a", "b", []byte(a), []byte(a), 3))
}

func TestNoFinalNewline(t *testing.T) {
	got := Unified("a", "b", []byte("x\ny"), []byte("x\ny\n"), 3)
	assert.Contains(t, got, "-y\n\\ No newline at end of file\n+y\n")
}

// TestMatchesGitDiff compares hunks against `git diff --no-index` on
// generated files: the same lines must be removed and added.
func TestMatchesGitDiff(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not on PATH")
	}
	dir := t.TempDir()
	var a, b []string
	for i := 0; i < 300; i++ {
		line := strings.Repeat("x", i%7) + string(rune('a'+i%26))
		a = append(a, line)
		switch {
		case i%37 == 0:
		case i%41 == 0:
			b = append(b, line, "inserted")
		case i%53 == 0:
			b = append(b, "changed "+line)
		default:
			b = append(b, line)
		}
	}
	pa, pb := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	ab, bb := []byte(strings.Join(a, "\n")+"\n"), []byte(strings.Join(b, "\n")+"\n")
	require.NoError(t, os.WriteFile(pa, ab, 0o644))
	require.NoError(t, os.WriteFile(pb, bb, 0o644))
	out, _ := exec.Command("git", "diff", "--no-index", "--no-color", "-U3", pa, pb).Output()
	count := func(s string, c byte) int {
		n := 0
		for _, l := range strings.Split(s, "\n") {
			if len(l) > 0 && l[0] == c && !strings.HasPrefix(l, "---") && !strings.HasPrefix(l, "+++") {
				n++
			}
		}
		return n
	}
	ours := Unified("a", "b", ab, bb, 3)
	assert.Equal(t, count(string(out), '-'), count(ours, '-'))
	assert.Equal(t, count(string(out), '+'), count(ours, '+'))
	assert.Equal(t, count(string(out), '@'), count(ours, '@'), "same number of hunks")
}

func FuzzUnified(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), []byte("a\nc\nd"))
	f.Add([]byte(""), []byte("x"))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		d := Unified("a", "b", a, b, 3)
		// Applying the diff's +/space lines must rebuild b's lines.
		if d == "" {
			if string(a) != string(b) {
				t.Fatal("empty diff for different inputs")
			}
			return
		}
		var minus, plus int
		for _, l := range strings.Split(d, "\n") {
			if strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "---") {
				minus++
			}
			if strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++") {
				plus++
			}
		}
		if minus > len(split(a)) || plus > len(split(b)) {
			t.Fatalf("more edits than lines: -%d +%d", minus, plus)
		}
		// Unified is the diff of the whole files' edit script: leaving out
		// the equal lines they start with changes nothing it prints.
		if want := unifiedOfScript(a, b, 3); d != want {
			t.Fatalf("Unified:\n%s\nfrom the whole script:\n%s", d, want)
		}
		// The edit script rebuilds both sides exactly.
		var ra, rb strings.Builder
		for _, o := range script(split(a), split(b)) {
			if o.kind != '+' {
				ra.WriteString(o.text)
			}
			if o.kind != '-' {
				rb.WriteString(o.text)
			}
		}
		if ra.String() != string(a) || rb.String() != string(b) {
			t.Fatalf("edit script does not rebuild the inputs")
		}
	})
}

// TestUnrelatedLargeFiles: two unrelated files of 50 000 lines each are past
// the edit bound: the diff is a whole replacement, computed without the
// O(D·N) memory of a naive Myers trace.
func TestUnrelatedLargeFiles(t *testing.T) {
	var a, b strings.Builder
	for i := 0; i < 50000; i++ {
		fmt.Fprintf(&a, "a line %d\n", i)
		fmt.Fprintf(&b, "b line %d\n", i)
	}
	d := Unified("a", "b", []byte(a.String()), []byte(b.String()), 3)
	assert.Equal(t, 50000, strings.Count(d, "\n-a line"))
	assert.Equal(t, 50000, strings.Count(d, "\n+b line"))
	assert.Equal(t, 1, strings.Count(d, "@@ -1,50000 +1,50000 @@"))
}

// unifiedOfScript is Unified as it was written before the equal ends were
// left out: the hunks of the whole files' edit script.
func unifiedOfScript(a, b []byte, context int) string {
	var out strings.Builder
	fmt.Fprintf(&out, "--- a\n+++ b\n")
	for _, h := range hunks(script(split(a), split(b)), context) {
		ai, bi, al, bl := h.bounds()
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", rng(ai, al), rng(bi, bl))
		for _, o := range h {
			writeLine(&out, o.kind, o.text)
		}
	}
	return out.String()
}

// A diff of two big versions that differ in a few lines holds a small
// multiple of the two files (each line shares one copy of its file, the
// equal lines they start with hold no edit op): under 40 bytes for each
// byte of input, where it held ~115 (1.1 GB for a 9.6 MB file of 3-byte
// lines).
func TestUnifiedMemory(t *testing.T) {
	var a strings.Builder
	for i := 0; i < 200000; i++ {
		fmt.Fprintf(&a, "%d,\n", i%10)
	}
	x := []byte(a.String())
	y := bytes.Clone(x)
	y[len(y)/2] = 'x'
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	d := Unified("a", "b", x, y, 3)
	runtime.ReadMemStats(&after)
	if !strings.Contains(d, "\n+x,\n") {
		t.Fatalf("the change is not in the diff:\n%s", d)
	}
	t.Logf("%.1f bytes allocated for each byte of input", float64(after.TotalAlloc-before.TotalAlloc)/float64(len(x)+len(y)))
	if per := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(x)+len(y)); per > 40 {
		t.Errorf("allocated %.1f bytes for each byte of input", per)
	}
}
