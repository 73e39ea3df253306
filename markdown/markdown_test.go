package markdown

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSections(t *testing.T) {
	src := "\xef\xbb\xbf---\ntitle: x\n---\n# Memory\r\n\r\nintro\r\n\r\n## Learnings\r\n- one\r\n- two\r\n  more\r\n\r\n```\r\n## fake heading\r\n```\r\n<!-- ## not a heading -->\r\n| a | b |\r\n|---|---|\r\n### Sub\r\n* deep\r\n## Next\r\n"
	d, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	got := d.Sections()
	var heads []string
	for _, s := range got {
		heads = append(heads, strings.Join(s.Path, " > "))
	}
	want := []string{"Memory", "Memory > Learnings", "Memory > Learnings > Sub", "Memory > Next"}
	if strings.Join(heads, "|") != strings.Join(want, "|") {
		t.Fatalf("sections %q, want %q", heads, want)
	}
	l := got[1]
	if l.Level != 2 || l.StartLine != 8 || l.EndLine != 20 {
		t.Errorf("Learnings level %d lines %d-%d, want 2 8-20", l.Level, l.StartLine, l.EndLine)
	}
	if len(l.Items) != 2 || l.Items[0].Text != "one" || l.Items[1].Text != "two\nmore" || l.Items[1].Line != 10 {
		t.Errorf("items %+v", l.Items)
	}
	if len(got[2].Items) != 1 || got[2].Items[0].Text != "deep" {
		t.Errorf("Sub items %+v", got[2].Items)
	}
}

// edits are table tests of AddItem: the exact bytes after, and that
// RemoveItem (or RemoveSection for a created heading) gives the input back.
var edits = []struct {
	name, src, heading, text, want string
}{
	{"append to list", "# M\n\n## L\n- a\n- b\n\n## N\n", "L", "c", "# M\n\n## L\n- a\n- b\n- c\n\n## N\n"},
	{"copies marker", "## L\n  * a\n", "L", "c", "## L\n  * a\n  * c\n"},
	{"crlf", "## L\r\n- a\r\n\r\ntext\r\n", "L", "c", "## L\r\n- a\r\n- c\r\n\r\ntext\r\n"},
	{"no final newline", "## L\n- a", "L", "c", "## L\n- a\n- c"},
	{"crlf no final newline", "## L\r\n- a", "L", "c", "## L\r\n- a\r\n- c"},
	{"empty section", "## L\n## N\n", "L", "c", "## L\n- c\n## N\n"},
	{"empty section at eof", "## L", "L", "c", "## L\n- c"},
	{"section with paragraph", "## L\ntext\n\n\n## N\n", "L", "c", "## L\ntext\n\n- c\n\n\n## N\n"},
	{"ordered list stays", "## L\n1. a\n", "L", "c", "## L\n1. a\n\n- c\n"},
	{"missing heading", "# M\n", "Workflow state", "c", "# M\n\n## Workflow state\n- c\n"},
	{"missing heading no newline", "# M", "Workflow state", "c", "# M\n\n## Workflow state\n- c"},
	{"missing heading trailing blank", "# M\n\n", "W", "c", "# M\n\n\n## W\n- c\n"},
	{"empty file", "", "W", "c", "## W\n- c\n"},
	{"front matter and bom", "\xef\xbb\xbf---\nx: 1\n---\n## L\n- a\n", "L", "c", "\xef\xbb\xbf---\nx: 1\n---\n## L\n- a\n- c\n"},
	{"fake heading in fence", "## L\n- a\n\n```\n## W\n```\n", "W", "c", "## L\n- a\n\n```\n## W\n```\n\n## W\n- c\n"},
	{"html comment and table", "## L\n<!-- note -->\n- a\n\n| x | y |\n|---|---|\n| 1 | 2 |\n", "L", "c", "## L\n<!-- note -->\n- a\n- c\n\n| x | y |\n|---|---|\n| 1 | 2 |\n"},
	{"loose list", "## L\n- a\n\n- b\n\n", "L", "c", "## L\n- a\n\n- b\n- c\n\n"},
	{"setext", "L\n===\n- a\n", "L", "c", "L\n===\n- a\n- c\n"},
	{"heading given with hashes", "## L\n- a\n", "## L", "c", "## L\n- a\n- c\n"},
	{"item with code", "## L\n- a\n  ```\n  x\n  ```\n", "L", "c", "## L\n- a\n  ```\n  x\n  ```\n- c\n"},
}

func TestAddItem(t *testing.T) {
	for _, tc := range edits {
		t.Run(tc.name, func(t *testing.T) {
			out, changed, err := AddItem([]byte(tc.src), tc.heading, 0, tc.text)
			if err != nil || !changed {
				t.Fatalf("AddItem: changed %v, err %v", changed, err)
			}
			if string(out) != tc.want {
				t.Fatalf("AddItem:\n got %q\nwant %q", out, tc.want)
			}
			again, changed, _ := AddItem(out, tc.heading, 0, " "+tc.text+" ")
			if changed || !bytes.Equal(again, out) {
				t.Fatalf("second AddItem changed the file: %q", again)
			}
			checkUndo(t, []byte(tc.src), tc.heading, 0, tc.text)
		})
	}
}

func TestAddItemUnsafe(t *testing.T) {
	src := []byte("## L\n- a\n\n```\nopen fence\n")
	out, changed, err := AddItem(src, "W", 0, "c")
	var ue *UnsafeError
	if !errors.As(err, &ue) || !errors.Is(err, ErrUnsafe) || changed || !bytes.Equal(out, src) {
		t.Fatalf("got %q %v %v, want ErrUnsafe and no change", out, changed, err)
	}
	if ue.Line != 4 || !strings.Contains(ue.Reason, "never closed") { // the cause, where to fix it
		t.Fatalf("cause %+v, want the fence of line 4", ue)
	}
	d, _ := Parse(src)
	if w := d.Warnings(); len(w) != 1 || w[0].Line != 4 || !strings.Contains(w[0].Message, "never closed") {
		t.Fatalf("warnings %+v", w)
	}
}

func TestTrimSection(t *testing.T) {
	src := "# M\n## Workflow state\n- note\n- Active 1\n- Active 2\n- keep me\n- Active 3\n## Other\n- Active x\n"
	out, n, _, err := TrimSection([]byte(src), "Workflow state", 2, 1, func(s string) bool { return strings.HasPrefix(s, "Active") })
	if err != nil || n != 2 {
		t.Fatalf("removed %d, err %v", n, err)
	}
	want := "# M\n## Workflow state\n- note\n- keep me\n- Active 3\n## Other\n- Active x\n"
	if string(out) != want {
		t.Fatalf("got %q\nwant %q", out, want)
	}
}

// checkUndo adds an item and takes it away again: the bytes must be the original.
func checkUndo(t *testing.T, src []byte, heading string, level int, text string) {
	t.Helper()
	existed := false
	if d, err := Parse(src); err == nil && d.Find(heading, level) != nil {
		existed = true
	}
	out, changed, err := AddItem(src, heading, level, text)
	if err != nil || !changed {
		return
	}
	var back []byte
	if existed {
		back, changed, err = RemoveItem(out, heading, level, text)
	} else {
		back, changed, err = RemoveSection(out, heading, level)
	}
	if err != nil || !changed {
		t.Fatalf("undo of %q under %q: changed %v err %v\nedited: %q", text, heading, changed, err, out)
	}
	if !bytes.Equal(back, src) {
		t.Fatalf("edit then undo changed the bytes\norig: %q\nedit: %q\nback: %q", src, out, back)
	}
}

func corpusFiles(t testing.TB) []string {
	dir := filepath.Join("..", "..", "shared", "corpus", "memory-md")
	if env := os.Getenv("STRATA_CORPUS"); env != "" {
		dir = filepath.Join(env, "memory-md")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.md"))
	return files
}

// TestCorpusByteIdentity edits every real MEMORY.md of the corpus under every
// one of its sections and under a missing heading, and undoes the edit.
func TestCorpusByteIdentity(t *testing.T) {
	files := corpusFiles(t)
	if len(files) == 0 {
		t.Skip("no corpus at ../shared/corpus/memory-md (set STRATA_CORPUS to its parent)")
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			d, err := Parse(src)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range d.Sections() {
				checkUndo(t, src, s.Heading, s.Level, "strata corpus probe line")
				out, changed, err := AddItem(src, s.Heading, s.Level, "strata corpus probe line")
				if err != nil || !changed || len(out) <= len(src) {
					t.Fatalf("%s: AddItem: changed %v, err %v", s.Heading, changed, err)
				}
			}
			checkUndo(t, src, "Workflow state", 2, "Active APEX workflow: plan completed, implementing x")
			if len(d.Sections()) == 0 {
				t.Logf("no headings")
			}
		})
	}
}

func FuzzEditUndo(f *testing.F) {
	for _, tc := range edits {
		f.Add([]byte(tc.src), tc.heading, tc.text)
	}
	for _, name := range corpusFiles(f) {
		if src, err := os.ReadFile(name); err == nil {
			f.Add(src, "Workflow state", "Active APEX workflow")
			if d, err := Parse(src); err == nil && len(d.Sections()) > 0 {
				f.Add(src, d.Sections()[len(d.Sections())/2].Heading, "a learning")
			}
		}
	}
	f.Fuzz(func(t *testing.T, src []byte, heading, text string) {
		if strings.ContainsAny(heading, "\r\n") || CleanHeading(heading) == "" || Normalize(heading) != heading {
			return
		}
		checkUndo(t, src, heading, 0, text)
	})
}

// InsertItem puts the item before the first one before picks, with that
// item's marker and indentation; without one it appends as AddItem; an
// item already there is not added again.
func TestInsertItem(t *testing.T) {
	isB := func(s string) bool { return s == "b" }
	for _, tc := range []struct{ name, src, want string }{
		{"before", "## L\n- a\n- b\n- c\n", "## L\n- a\n- x\n- b\n- c\n"},
		{"marker copied", "## L\n* a\n  * b\n* b\n", "## L\n* a\n  * b\n* x\n* b\n"},
		{"first item", "## L\n- b\n", "## L\n- x\n- b\n"},
		{"none picked: appended", "## L\n- a\n", "## L\n- a\n- x\n"},
		{"no section: made", "# M\n", "# M\n\n## L\n- x\n"},
		{"there already", "## L\n- x\n- b\n", "## L\n- x\n- b\n"},
		{"other lines stay", "## L\n- a\n\n  more of a\n\n- b\n\n## N\n- b\n", "## L\n- a\n\n  more of a\n\n- x\n- b\n\n## N\n- b\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, changed, err := InsertItem([]byte(tc.src), "L", 0, "x", isB)
			if err != nil || changed != (tc.src != tc.want) || string(out) != tc.want {
				t.Fatalf("InsertItem = %q, %v, %v; want %q", out, changed, err, tc.want)
			}
		})
	}
}
