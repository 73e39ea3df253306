package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/strata-dev/strata/state"
	"github.com/strata-dev/strata/validate"
)

// Error is a mistake in .strata.yaml found after it decoded, positioned at
// the key at fault. It is a usage error: the configuration must be fixed.
type Error struct {
	state.Problem
	// Root is the work tree whose .strata.yaml it is (Parse's root): the
	// Claude Code hook tells an agent whose write broke that file, and
	// only that one, that it did.
	Root string
}

func (e *Error) Error() string { return e.Problem.Error() }

// ReadError is a .strata.yaml that is there but cannot be read: a symbolic
// link strata does not follow (out of the work tree, into the git
// directory, dangling), a named pipe, a directory, an I/O error. Commands
// stop on it (exit 3); doctor reports it as its config finding.
type ReadError struct{ Err error }

func (e *ReadError) Error() string { return "read " + FileName + ": " + errText(e.Err) }

func (e *ReadError) Unwrap() error { return e.Err }

// checkFileKey checks the path named by `memory:` (class memory) or
// `graph:` (class graph). A committed configuration travels with every
// clone, so it may only name a file of the work tree, checked as a glob is:
// repository-relative, no "..", nothing inside .git. The one file outside
// the work tree it may name is Claude Code's auto-memory file of this
// repository, which strata finds by itself anyway; $MEMORY_FILE_PATH, set
// by the user, is read from the environment.
//
// The layer protocol writes into these files unasked (the watcher,
// `record --layers`, resume's TTL, sync, `memory add`), so the name must
// also be one of the layer's own (MemoryName, GraphName), and no rule may
// keep the file as another class: a configuration naming
// .claude/settings.json, .envrc or .strata.yaml would have strata append
// Markdown or JSON lines to it (attack23-hostile F1).
func (c *Config) checkFileKey(class state.Class, p string) error {
	if p == "" {
		return nil
	}
	if !(class == state.ClassMemory && p == c.AutoMemory()) {
		if p == "~" || len(p) > 1 && p[0] == '~' {
			return errors.New("outside the work tree: name a repository-relative path (only Claude Code's auto-memory file is kept outside it, found without configuration)")
		}
		if err := checkRel(p); err != nil {
			return err
		}
	}
	name := MemoryName
	if class == state.ClassGraph {
		name = GraphName
	}
	if err := name(p); err != nil {
		return err
	}
	if other, by := c.ruleClass(p); other != "" && other != class {
		return fmt.Errorf("%s keeps this file as %s; the %s file must be a file of its own", by, other, layerName(class))
	}
	return nil
}

// MemoryName checks the name of the L2 file: a file named MEMORY.md (in
// any case), as every default candidate and Claude Code's auto-memory file
// is, and not in a folder of .claude/ other than .claude itself and
// .claude/memory. The layer protocol appends text the agent's state gives
// to it, unasked, so a committed configuration must not make that file one
// an agent reads as instructions: CLAUDE.md, AGENTS.md, a subagent's or a
// command's definition under .claude/agents/ or .claude/commands/
// (attack23-recheck N2), nor any file of another kind (a shell start-up
// file, JSON, YAML, git's own files, .strata.yaml: attack23-hostile F1).
// The layer protocol checks it again before each write, also where the
// file really is (the one door of the L2 file's writes).
func MemoryName(rel string) error {
	if !strings.EqualFold(path.Base(rel), "MEMORY.md") {
		return errors.New("not a file named MEMORY.md: strata writes its workflow lines into the L2 file, so it names only a MEMORY.md such as .claude/memory/MEMORY.md, never a file an agent reads as instructions (CLAUDE.md, AGENTS.md, .claude/agents/*.md)")
	}
	dir := strings.ToLower(path.Dir(rel))
	if strings.HasPrefix(dir+"/", ".claude/") && dir != ".claude" && dir != ".claude/memory" {
		return errors.New("in a folder of .claude/ that Claude Code reads as agents, commands or settings: the L2 file is .claude/MEMORY.md, .claude/memory/MEMORY.md or a MEMORY.md outside .claude/")
	}
	return nil
}

// GraphName checks the name of the L3 file named by `graph:`: a JSON Lines
// file, its name ending in ".jsonl" (in any case), or one named
// memory.json, the memory server's former default name (its content is
// JSON Lines too). Other JSON files (package.json, tsconfig.json) hold one
// document, which a line added to it would break.
func GraphName(rel string) error {
	if strings.EqualFold(path.Ext(rel), ".jsonl") || strings.EqualFold(path.Base(rel), "memory.json") {
		return nil
	}
	return errors.New("not a JSON Lines file (.jsonl, or memory.json): strata writes graph entities into the L3 file, so it names only the MCP memory server's file such as .claude/memory.jsonl")
}

// ruleClass is the class a rule gives rel, as if it were not a layer file,
// and which rule gives it: the first matching rule's class: (of the user's
// own rules, only an explicit one counts: a rule that gives the layer file
// a schema of the user's own, or ignores it, leaves it a layer file), else
// the built-in rule's for that path. "" when none gives it a class.
func (c *Config) ruleClass(rel string) (state.Class, string) {
	// matched in any case too: on a file system that folds case (macOS,
	// Windows) .claude/MEMORY.JSON is the file .claude/*.json keeps
	// (attack23-recheck N3)
	folded := strings.ToLower(rel)
	for i, r := range c.Rules {
		if !globMatch(r.Glob, rel) && !globMatch(strings.ToLower(r.Glob), folded) {
			continue
		}
		switch {
		case r.Ignore:
			return "", ""
		case i < c.user && r.Class != "":
			return r.Class, fmt.Sprintf("the rule /files/%d", i)
		}
		d := defaultFor(rel)
		if d.Class == "" {
			d = defaultFor(folded)
		}
		if d.Class != "" {
			return d.Class, "the built-in rule " + d.Glob
		}
		return "", ""
	}
	return "", ""
}

// layerName is how errors name a layer file: "L2 memory" or "L3 graph".
func layerName(class state.Class) string {
	if class == state.ClassGraph {
		return "L3 graph"
	}
	return "L2 memory"
}

// checkFormat checks a rule's format: key.
func checkFormat(f string) error {
	if f == "" || slices.Contains(validate.Formats, f) {
		return nil
	}
	return fmt.Errorf("unknown format %q, want one of %s", f, strings.Join(validate.Formats, ", "))
}

// MaxClass is the longest class name a rule may give.
const MaxClass = 64

// checkClass refuses a rule's class that is not a name: ASCII letters,
// digits, '-', '_' and '.', starting with a letter or digit, at most
// MaxClass of them, as every built-in class is (workflow-state,
// claude-json). A class goes raw into the Strata-Class trailer of every
// commit that records the rule's files, which sync publishes, and into the
// CLASS column of status; .strata.yaml may come with the repository from
// anyone who can push (attack35b L1: an escape sequence as a class reached
// every machine's terminal through git log). "" is the default class.
func checkClass(c string) error {
	ok := len(c) <= MaxClass
	for i := 0; ok && i < len(c); i++ {
		b := c[i]
		ok = 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || i > 0 && (b == '-' || b == '_' || b == '.')
	}
	if ok {
		return nil
	}
	shown := c
	if len(shown) > MaxClass {
		shown = shown[:MaxClass] + "..."
	}
	return fmt.Errorf("class %q is not a name: want ASCII letters, digits, '-', '_' and '.' (workflow-state), starting with a letter or digit, at most %d of them", shown, MaxClass)
}

// readConfig reads root/.strata.yaml, a regular file. A committed
// .strata.yaml may be a symbolic link: it is followed only when its real
// path is a file of the work tree, outside .git and the git directories
// (docs/contract.md §2). One that leaves them is refused without a word of
// its target, which may be any file on the machine (/proc/self/environ,
// a key): the error would quote the lines it could not parse. The checks
// of the link's target are of names; the read resolves the real path
// again beneath the work tree (state.Tree) and judges the folder it found
// the file in, so that a folder swapped for a symbolic link out of the
// tree (or into .git) after the checks is refused, never read.
func readConfig(root string, gitDirs []string) ([]byte, error) {
	name := filepath.Join(root, FileName)
	fi, err := os.Lstat(name)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return state.ReadRegular(name, maxConfigSize, false)
	}
	real, err := filepath.EvalSymlinks(name)
	if err != nil {
		return nil, errors.New("a symbolic link that does not resolve; not followed")
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	if !state.Within(realRoot, real) {
		return nil, errOutOfTree
	}
	inGit := func(real string) bool {
		rel, _ := filepath.Rel(realRoot, real)
		if errors.Is(state.CheckPath(filepath.ToSlash(rel)), state.ErrDotGit) {
			return true
		}
		for _, d := range gitDirs {
			if d, err := filepath.EvalSymlinks(d); err == nil && state.Within(d, real) {
				return true
			}
		}
		return false
	}
	if inGit(real) {
		return nil, errIntoGit
	}
	if beforeConfigRead != nil {
		beforeConfigRead()
	}
	rel, _ := filepath.Rel(realRoot, real)
	tree := state.Tree{Root: root, Real: realRoot, Judge: func(dir string) error {
		if inGit(filepath.Join(dir, filepath.Base(real))) {
			return errIntoGit
		}
		return nil
	}}
	data, err := tree.ReadFile(filepath.ToSlash(rel), maxConfigSize)
	if errors.Is(err, state.ErrOutside) {
		return nil, errOutOfTree
	}
	return data, err
}

var (
	errOutOfTree = errors.New("a symbolic link out of the work tree; not followed")
	errIntoGit   = errors.New("a symbolic link into the git directory; not followed")
)

// beforeConfigRead, when set by a test, runs between readConfig's checks of
// a .strata.yaml link's target and its read: where a racing process swaps
// a folder.
var beforeConfigRead func()

// maxConfigSize bounds .strata.yaml, as the YAML decoder does.
const maxConfigSize = validate.DefaultMaxSize

// errText drops the file name an *fs.PathError repeats.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
