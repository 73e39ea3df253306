package layers

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-dev/strata/atomicfile"
	"github.com/strata-dev/strata/state"
)

// inPlaceWriter is another process's writer of rel that opened the file
// before strata's write (O_APPEND, as a shell's `>>` and Node's
// fs.appendFile do) and writes line through that descriptor, in its own
// goroutine, when the test says so.
type inPlaceWriter struct {
	t    *testing.T
	go_  chan struct{}
	done chan error
}

func openInPlace(t *testing.T, name, line string) *inPlaceWriter {
	t.Helper()
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	w := &inPlaceWriter{t: t, go_: make(chan struct{}), done: make(chan error, 1)}
	go func() {
		defer f.Close()
		<-w.go_
		_, err := f.WriteString(line)
		w.done <- err
	}()
	return w
}

// write has the writer write now and waits until it has.
func (w *inPlaceWriter) write() {
	close(w.go_)
	if err := <-w.done; err != nil {
		w.t.Error(err)
	}
}

// protocolRepo is a repository whose MEMORY.md is memory, recorded, with a
// workflow step recorded whose protocol line is still to be written.
func protocolRepo(t *testing.T, memory string) (*testRepo, func()) {
	r := newTestRepo(t)
	r.write(memoryPath, []byte(memory))
	r.write(".claude/memory.jsonl", nil)
	r.write(WorkflowStatePath, []byte(`{"type":"APEX","phase":"plan","context":"auth","lastUpdated":"2026-11-22T10:00:00Z"}`+"\n"))
	r.open()
	r.recordAll()
	outs := r.step(`{"type":"APEX","phase":"implement","context":"auth","lastUpdated":"2026-11-22T10:00:05Z"}`+"\n", state.SourceRecord)
	return r, func() {
		t.Helper()
		if _, err := New(r.eng, func(m string) { t.Errorf("warning: %s", m) }).AfterRecord(outs); err != nil {
			t.Fatal(err)
		}
	}
}

const protoLine = "- Active APEX workflow: plan completed, implementing auth\n"

// The protocol's line added at the end of MEMORY.md is appended in place
// (attack23-verify 3): a line another writer appends through a descriptor
// it opened before strata's write, written once strata's line is in
// place, is in the file after it, and the file is the same file. (Written
// by a new file swapped in, the line went into the file swapped out.)
// The layouts are those the splice edits by a pure append (not, say, a
// file ending in a blank line, where the item goes before it).
func TestProtocolLineAppendedInPlace(t *testing.T) {
	for _, tc := range []struct{ name, before, want string }{
		{"last section", "# Memory\n\n## Workflow state\n- Active APEX workflow: a completed, entering plan auth\n",
			"# Memory\n\n## Workflow state\n- Active APEX workflow: a completed, entering plan auth\n" + protoLine + "- user line\n"},
		{"no section yet", "# Memory\n\n## Notes\n\n- user note one\n",
			"# Memory\n\n## Notes\n\n- user note one\n\n## Workflow state\n" + protoLine + "- user line\n"},
		// the file's final-newline state is kept, as by the splice: the
		// other writer's line then joins strata's, as it joined the last
		// line before
		{"no final newline", "# Memory\n\n## Workflow state\n- Active APEX workflow: a completed, entering plan auth",
			"# Memory\n\n## Workflow state\n- Active APEX workflow: a completed, entering plan auth\n" + strings.TrimSuffix(protoLine, "\n") + "- user line\n"},
		{"crlf", "# Memory\r\n\r\n## Workflow state\r\n- Active APEX workflow: a completed, entering plan auth\r\n",
			"# Memory\r\n\r\n## Workflow state\r\n- Active APEX workflow: a completed, entering plan auth\r\n" + strings.TrimSuffix(protoLine, "\n") + "\r\n- user line\n"},
		{"front matter and bom", "\uFEFF---\ntitle: m\n---\n# Memory\n\n## Workflow state\n\n- Active APEX workflow: a completed, entering plan auth\n",
			"\uFEFF---\ntitle: m\n---\n# Memory\n\n## Workflow state\n\n- Active APEX workflow: a completed, entering plan auth\n" + protoLine + "- user line\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, protocol := protocolRepo(t, tc.before)
			name := filepath.Join(r.dir, memoryPath)
			st, err := os.Stat(name)
			if err != nil {
				t.Fatal(err)
			}
			w := openInPlace(t, name, "- user line\n")
			meanwhile(t, "written "+memoryPath, 1, w.write)
			protocol()
			if got := string(r.read(memoryPath)); got != tc.want {
				t.Errorf("MEMORY.md:\n%q\nwant\n%q", got, tc.want)
			}
			if now, err := os.Stat(name); err != nil || !os.SameFile(st, now) {
				t.Errorf("MEMORY.md is another file now (%v): not appended in place", err)
			}
		})
	}
}

// An edit that is not a pure append (here the cap of 20 removes the
// oldest protocol line) still replaces the file, by a swap; a writer that
// opened the file before the swap and writes into it right after strata
// has looked at the file swapped out (atomicfile.ReplaceStep "accepted")
// is caught by the second look after the settle time: the swap is undone,
// and the protocol edits the file as that writer left it.
func TestProtocolLineKeepsAnInPlaceWriteIntoTheFileSwappedOut(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Memory\n\n## Workflow state\n")
	for i := 1; i <= MaxWorkflowLines; i++ {
		fmt.Fprintf(&b, "- Active APEX workflow: a%d completed, entering b%d auth\n", i, i)
	}
	r, protocol := protocolRepo(t, b.String())
	name := filepath.Join(r.dir, memoryPath)
	w := openInPlace(t, name, "- user line\n")
	once := false
	atomicfile.ReplaceStep = func(step, at string) {
		if step == "accepted" && at == name && !once {
			once = true
			w.write()
		}
	}
	t.Cleanup(func() { atomicfile.ReplaceStep = nil })
	protocol()
	if !once {
		t.Fatal("the file was not replaced by a swap")
	}
	want := strings.Replace(b.String(), "- Active APEX workflow: a1 completed, entering b1 auth\n", "", 1) + "- user line\n" + protoLine
	if got := string(r.read(memoryPath)); got != want {
		t.Errorf("MEMORY.md:\n%s\nwant\n%s", got, want)
	}
}

// memory add's item, added at the end of the file's last section, is
// appended in place too: a line another writer appends through a
// descriptor opened before the add, written once the item is in place,
// is kept after it.
func TestAddLearningAppendedInPlace(t *testing.T) {
	r := newTestRepo(t)
	r.write(memoryPath, []byte("# Memory\n\n## Learnings\n\n- first\n"))
	r.open()
	r.recordAll()
	a := New(r.eng, func(m string) { t.Log(m) })
	f, err := a.MemoryFile()
	if err != nil {
		t.Fatal(err)
	}
	w := openInPlace(t, filepath.Join(r.dir, memoryPath), "- agent note\n")
	meanwhile(t, "written "+memoryPath, 1, w.write)
	if added, _, err := a.AddLearning(f, "Learnings", "user line"); err != nil || !added {
		t.Fatalf("AddLearning = %v, %v", added, err)
	}
	want := "# Memory\n\n## Learnings\n\n- first\n- user line\n- agent note\n"
	if got := string(r.read(memoryPath)); got != want {
		t.Errorf("MEMORY.md:\n%q\nwant\n%q", got, want)
	}
}
