package layers

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/state"
)

// corpusDir finds the shared corpus of real state files (never copied into
// this repository): "shared/corpus" beside the repository or one of its
// parents.
func corpusDir() string {
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return ""
	}
	for i := 0; i < 3; i++ {
		c := filepath.Join(dir, "shared", "corpus")
		if st, err := os.Stat(filepath.Join(c, "MANIFEST.tsv")); err == nil && st.Mode().IsRegular() {
			return c
		}
		dir = filepath.Dir(dir)
	}
	return ""
}

// formatSchema is the well-formed-only schema that fits a file.
func formatSchema(p string) string {
	switch strings.ToLower(filepath.Ext(p)) {
	case ".yaml", ".yml":
		return "yaml"
	case ".jsonl":
		return "jsonl"
	case ".md":
		return "markdown"
	}
	return "json"
}

// TestCorpusAdoptionChangesNothing puts every real file of the corpus at the
// path it had in its repository, tracked in git, under a rule giving it a
// format-only schema (json for JSON), and runs init and resume (what the
// SessionStart hook runs): no file on disk changes and no file appears.
func TestCorpusAdoptionChangesNothing(t *testing.T) {
	corpus := corpusDir()
	if corpus == "" {
		t.Skip("no shared/corpus beside the repository: skipped")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	mf, err := os.Open(filepath.Join(corpus, "MANIFEST.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer mf.Close()
	type entry struct{ local, path string }
	var entries []entry
	sc := bufio.NewScanner(mf)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) < 3 || f[0] == "local_file" {
			continue
		}
		entries = append(entries, entry{f[0], f[2]})
	}
	checked := 0
	for _, en := range entries {
		data, err := os.ReadFile(filepath.Join(corpus, filepath.FromSlash(en.local)))
		if err != nil {
			t.Fatalf("%s: %v", en.local, err)
		}
		t.Run(en.local, func(t *testing.T) {
			dir := t.TempDir()
			run := func(args ...string) {
				t.Helper()
				cmd := exec.Command("git", args...)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir,
					"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v\n%s", args, err, out)
				}
			}
			run("init", "-q")
			name := filepath.Join(dir, filepath.FromSlash(en.path))
			if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(name, data, 0o644); err != nil {
				t.Fatal(err)
			}
			cfg := "files:\n  - glob: " + en.path + "\n    schema: " + formatSchema(en.path) + "\n"
			if err := os.WriteFile(filepath.Join(dir, ".strata.yaml"), []byte(cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			run("add", "-A")
			run("commit", "-q", "-m", "corpus file")
			before := snapshot(t, dir)
			eng, err := engine.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := eng.Init(); err != nil {
				t.Fatal(err)
			}
			var warnings []string
			if _, err := New(eng, func(m string) { warnings = append(warnings, m) }).Resume(state.SourceRecord); err != nil {
				t.Fatalf("resume: %v", err)
			}
			after := snapshot(t, dir)
			for p, b := range before {
				if a, ok := after[p]; !ok || !bytes.Equal(a, b) {
					t.Errorf("%s changed by init + resume", p)
				}
			}
			for p := range after {
				if _, ok := before[p]; !ok {
					t.Errorf("%s created by init + resume (warnings %q)", p, warnings)
				}
			}
			checked++
		})
	}
	t.Logf("%d corpus files adopted under format-only rules: none changed, none created", checked)
	if checked != len(entries) {
		t.Fatalf("%d of %d corpus files checked", checked, len(entries))
	}
}

// snapshot reads every file of the work tree outside .git.
func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return fs.SkipDir
		}
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			out[filepath.ToSlash(rel)] = b
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
