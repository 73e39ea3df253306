package engine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/state"
)

// A kept file whose absolute name is longer than PATH_MAX is one problem
// line of record, never left out of it with nothing said (attack36 M4).
func TestKeptPastPathMax(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", home)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	dir := t.TempDir()
	for len(dir) < 3900 {
		dir = filepath.Join(dir, strings.Repeat("d", min(250, 3950-len(dir))))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, config.FileName), []byte("# defaults\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rel := "PhaseOutputs/" + strings.Repeat("s", 250) + "/phase-01-query.json"
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.MkdirAll(filepath.Dir(rel), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteFile(rel, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	all, err := e.AllPaths()
	if err != nil {
		t.Fatal(err)
	}
	outs, err := e.Record(all, state.SourceRecord)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, o := range outs {
		if len(o.Problems) > 0 {
			lines = append(lines, o.Problems.Error())
		}
	}
	want := rel + ": /: cannot stat: its absolute name is " + strconv.Itoa(len(dir)+1+len(rel)) + " bytes, longer than PATH_MAX (4096); move the work tree to a shorter path"
	if len(lines) != 1 || lines[0] != want {
		t.Fatalf("problems %q, want [%q]", lines, want)
	}
}
