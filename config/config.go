// Package config reads a repository's optional .strata.yaml and answers the
// one question every other part of strata asks: is this path a kept file, of
// which class, checked against which schema? It also locates the L2 memory
// file and the L3 graph file, which may live outside the work tree.
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/big"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode"

	"github.com/strata-dev/strata/atomicfile"
	"github.com/strata-dev/strata/state"
	"github.com/strata-dev/strata/validate"
)

// FileName is the configuration file at the root of the work tree.
const FileName = ".strata.yaml"

// DefaultMaxSize is the largest kept file strata reads (docs/contract.md §1).
const DefaultMaxSize = 10 << 20

// MaxSizeCeiling is the largest max_size a configuration may set. The
// configuration may come with the repository, so its max_size must not let
// a file make every reader slow and memory-hungry: git compresses a GiB of
// one byte to about a MiB, so such a file costs a clone nothing, while
// strata holds each kept file whole and a decoder several times over.
// Agents' state files are kilobytes. The decoded JSON of an array of small
// values costs ~45 bytes a source byte: measured, 64 MB of [1,1,…] with a
// schema took 33 s and 3 GB, 16 MB 12 s and 690 MB on a loaded machine
// (docs/contract.md §2; a file checked for syntax alone builds nothing now).
const MaxSizeCeiling = 16 << 20

// Rule maps a glob of repo-relative paths to a class and a schema. Globs use
// path.Match syntax per path segment ("*" never crosses "/").
type Rule struct {
	Glob   string      `json:"glob"`
	Class  state.Class `json:"class,omitempty"`
	Schema string      `json:"schema,omitempty"`
	Format string      `json:"format,omitempty"` // json, yaml or jsonl; "" means by the file's extension
	Ignore bool        `json:"ignore,omitempty"` // the path is not kept
	// TTL is the workflow-state TTL for this rule's files: "off" (never
	// expired) or a duration like 48h; "" is the state's own ttl, else the
	// global ttl, else 24h.
	TTL string `json:"ttl,omitempty"`
}

// Kept is a path that strata keeps, with the class and schema that apply.
type Kept struct {
	Path   string // slash-separated, repo-relative; "~/..." for a file under the home directory
	Class  state.Class
	Schema string
	Format string // the rule's format: key; "" means by the file's extension
	TTL    string // the rule's ttl, else the global one ("off", a duration, or "")
}

// DefaultRules are consulted after the user's own rules; the first match wins.
var DefaultRules = []Rule{
	{Glob: ".claude/workflow-state.json", Class: state.ClassWorkflowState, Schema: "workflow-state"},
	{Glob: ".claude/initiative.json", Class: state.ClassInitiative, Schema: "initiative"},
	{Glob: ".claude/interview-state.json", Class: state.ClassInterviewState, Schema: "interview-state"},
	{Glob: ".claude/delegation-log.json", Class: state.ClassDelegationLog, Schema: "delegation-log"},
	{Glob: ".claude/*.json", Class: state.ClassClaudeJSON, Schema: "json"},
	{Glob: "PhaseOutputs/*/phase-*.json", Class: state.ClassPhaseOutput, Schema: "phase-output"},
	{Glob: "PhaseOutcomes/*/*-resolution-*.yaml", Class: state.ClassDecisionResolution, Schema: "decision-resolution"},
	{Glob: "PhaseOutcomes/*/*.yaml", Class: state.ClassPhaseOutcome, Schema: "phase-outcome"},
}

// MemoryCandidates are the repo-relative places of the L2 file, in order.
var MemoryCandidates = []string{".claude/memory/MEMORY.md", ".claude/MEMORY.md", "MEMORY.md"}

// DefaultGraph is the L3 file when $MEMORY_FILE_PATH is not set.
const DefaultGraph = ".claude/memory.jsonl"

// Config is a repository's effective configuration: the user's file over the defaults.
type Config struct {
	Root    string // absolute work-tree root
	Home    string // the user's home directory ("" when unknown)
	Rules   []Rule // the user's rules, then DefaultRules
	MaxSize int64
	Memory  string // the L2 file when loaded: repo-relative, or "~/..." for Claude Code's auto-memory file (L2 says which it is now)
	Graph   string // the L3 file: repo-relative, or "~/..."
	TTL     string // the global workflow-state ttl: "off", a duration, or ""
	// MemoryPinned is set when .strata.yaml names the L2 file (memory:);
	// otherwise every in-tree candidate (MemoryCandidates) that exists is
	// kept as a memory file, Memory being the first.
	MemoryPinned bool
	// graphNamed is set when .strata.yaml names the L3 file (graph:).
	graphNamed bool
	// l2 is the L2 file found by the last RefreshL2 (nil: Memory).
	l2 atomic.Pointer[string]
	// MemoryCreate lets the layer protocol create the L2 file when it does
	// not exist (memory_create: true); otherwise only `memory add` does.
	MemoryCreate bool
	// SyncHome is .strata.yaml's sync_home: true, which is never honoured
	// (the file may come with the repository); `strata sync` says so
	// (engine.SyncHome: git config strata.syncHome or --home decide).
	SyncHome bool
	// Ignored reports whether git ignores a repo-relative path (nil: nothing
	// is). Such a file is kept only when KeepPrivate says so.
	Ignored func(rel string) bool
	// PrivateBefore is why a repo-relative path that is not private now was
	// private by the rules of HEAD or an earlier HEAD ("" when it was not;
	// nil: never): a .gitignore or .gitattributes change, which may come
	// from anyone who can push, does not make a private file shareable
	// (gitstore.Ignores.IgnoredBefore, FilteredBefore). Such a file, too, is
	// kept only when KeepPrivate says so.
	PrivateBefore func(rel string) string
	// Nested returns the folder (repo-relative) of another repository
	// nested in the work tree — a submodule, a clone: a folder holding a
	// .git entry — that holds rel, "" when none does (nil: none). Its files
	// are never kept, even when a rule names them.
	Nested func(rel string) string
	// LinkAbove returns, for a folder of rel (as named) that is a symbolic
	// link to the folder holding it or to one above it (loop -> .), a link
	// loop, the reason WhyLinkAbove gives; "" when there is none (nil:
	// none). Such a path names a file strata reaches by another name, or
	// none at all; it is never kept.
	LinkAbove func(rel string) string
	// LinkedByGit names the folder of a repo-relative path that is a
	// symbolic link git tracks, when the path reaches the file through it
	// to another folder of the work tree ("" or nil: none). A commit
	// brings such a link from anyone who can push (.claude/memory ->
	// ../notes): a file a built-in rule keeps by the link's name is then
	// kept only as one a .strata.yaml rule keeps — once git tracks it and
	// HEAD commits it where it really is (Tracked, Committed), or
	// KeepPrivate says so (attack28-recheck N1).
	LinkedByGit func(rel string) string
	// KeepPrivate reports whether the user's own git configuration
	// (strata.keepPrivate) keeps a private repo-relative path that a rule
	// matches (nil: none does). Nothing else keeps a private file: not a
	// rule of .strata.yaml, which may come with the repository from
	// anyone who can push to it.
	KeepPrivate func(rel string) bool
	// Memo, when set, remembers classify's answers while what they were
	// judged from stays as it was (the engine's: one command's run, one
	// watcher batch); nil: every classification is made afresh.
	Memo ClassifyMemo
	// Tracked reports whether git tracks a repo-relative path: the index
	// holds it, as written (nil: every path counts as tracked). A file that
	// git does not track and that only a rule of .strata.yaml keeps — no
	// built-in rule (DefaultRules, the layer files) matches it — is private:
	// that file may come with the repository from anyone who can push, and
	// its rule would otherwise publish a file the user never gave to git
	// (attack25 K4: a committed config/* rule and the user's own
	// config/credentials.yml). It too is kept only when KeepPrivate says so.
	Tracked func(rel string) bool
	// Committed reports whether HEAD's commit holds a repo-relative path
	// that git tracks (nil: every tracked path counts as committed). A
	// file only a rule of .strata.yaml keeps is kept once a commit holds
	// it, not from its `git add`: a file only staged may be unstaged a
	// moment later (a password staged by mistake), and a version recorded
	// in between would go out with the path's history once a template of
	// the file is committed (attack27-withheld a1, a2). Such a file is
	// private (WhyStagedOnly) until the commit, unless KeepPrivate says so.
	Committed func(rel string) bool
	// Hidden names the flag by which git is told to ignore the local
	// changes of a tracked repo-relative path ("skip-worktree",
	// "assume-unchanged"; "" or nil: none). git never publishes that
	// file's version in the work tree — the usual way to keep a real
	// password in a committed template — so, whatever rule keeps it, it is
	// kept only when KeepPrivate says so (attack26 F1).
	Hidden func(rel string) string
	// Filter names the filter driver git passes a repo-relative path through
	// (its filter attribute; "" or nil: none). git publishes such a file
	// only in its cleaned (encrypted) form, so, like an ignored one, it is
	// kept only when KeepPrivate says so.
	Filter func(rel string) string
	// FollowDir reports whether the symbolic link at rel, where a directory
	// of kept files could be, is followed: it leads to a directory inside
	// the work tree, outside every git directory and nested repository, so
	// the files behind it are kept under rel, as record reads them (nil:
	// no link is followed).
	FollowDir func(rel string) bool

	user    int      // how many of Rules are the user's own
	private []string // the last ScanAll's withheld files: they match a rule but are private
	temps   []string // the last ScanAll's folders holding strata's temp files (atomicfile.Prefix)
	dirs    []string // the last ScanAll's directories at a kept file's name
}

// file is the on-disk shape of .strata.yaml.
type file struct {
	Version int    `json:"version"`
	MaxSize any    `json:"max_size"`
	Files   []Rule `json:"files"`
	Memory  string `json:"memory"`
	Graph   string `json:"graph"`
	TTL     any    `json:"ttl"`
	// MemoryCreate: the layer protocol may create MEMORY.md.
	MemoryCreate bool `json:"memory_create"`
	// SyncHome: sync the home ref too.
	SyncHome bool `json:"sync_home"`
}

// Load reads root/.strata.yaml when present and returns the effective
// configuration. A malformed file is an error naming the file and line.
// gitDirs are the repository's git directories (its own and the common
// one); a .strata.yaml symlink into one is refused, as is one out of the
// work tree (readConfig).
func Load(root string, gitDirs ...string) (*Config, error) {
	data, err := readConfig(root, gitDirs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Parse(root, nil)
	case err != nil:
		return nil, &ReadError{Err: err}
	}
	return Parse(root, data)
}

// Parse is Load with the content of .strata.yaml given, read from where the
// caller judges (the git index, for the pre-commit hook); nil means there
// is none and the defaults apply.
func Parse(root string, data []byte) (*Config, error) {
	c, err := parse(root, data)
	if ce := (*Error)(nil); errors.As(err, &ce) {
		ce.Root = root
	}
	return c, err
}

func parse(root string, data []byte) (*Config, error) {
	home, _ := os.UserHomeDir()
	c := &Config{Root: root, Home: home, MaxSize: DefaultMaxSize}
	var f file
	if data != nil {
		v, problems := validate.DecodeYAML(FileName, data)
		for _, p := range problems {
			if !p.Warning {
				return nil, &Error{Problem: p}
			}
		}
		if v != nil {
			if at, name, known := unknownKey(v, reflect.TypeOf(f), ""); at != "" {
				return nil, &Error{Problem: validate.ProblemAt(FileName, data, true, at,
					fmt.Sprintf("unknown key %q (known here: %s)", name, strings.Join(known, ", ")))}
			}
			if ptr, err := decodeFile(v, &f); err != nil {
				msg := strings.TrimPrefix(err.Error(), "json: ")
				var te *json.UnmarshalTypeError
				if errors.As(err, &te) {
					msg = fmt.Sprintf("want %s, not %s", kindName(te.Type), te.Value)
					// a number a whole-number key cannot hold: json names it
					// "number LITERAL" (attack25: "want a number, not number 999…")
					if lit, ok := strings.CutPrefix(te.Value, "number "); ok && kindName(te.Type) == "a number" {
						msg = "want a whole number, not " + lit
						if !strings.ContainsAny(lit, ".eE") {
							msg = lit + " is too large"
						}
					}
				}
				return nil, &Error{Problem: validate.ProblemAt(FileName, data, true, ptr, msg)}
			}
		}
	}
	// bad is the one error of a value at ptr: FILE:LINE:COL: POINTER: message,
	// a usage error in the user's configuration (exit 2).
	bad := func(ptr string, err error) error {
		return &Error{Problem: validate.ProblemAt(FileName, data, true, ptr, err.Error())}
	}
	if f.Version != 0 && f.Version != 1 {
		// a file written for another format is not read under this one's rules
		return nil, bad("/version", fmt.Errorf("version %d is not one this strata reads (1); upgrade strata, or write version: 1", f.Version))
	}
	for i, r := range f.Files {
		at := fmt.Sprintf("/files/%d", i)
		if r.Glob == "" {
			return nil, bad(at, errors.New("glob: required"))
		}
		if _, err := path.Match(r.Glob, ""); err != nil {
			return nil, bad(at+"/glob", err)
		}
		if err := checkRel(r.Glob); err != nil {
			return nil, bad(at+"/glob", err)
		}
		// A schema file is read like a kept file: a committed configuration
		// names one of the work tree, never one outside it or inside .git.
		if validate.SchemaFile(r.Schema) {
			if err := checkRel(r.Schema); err != nil {
				return nil, bad(at+"/schema", err)
			}
		}
		if err := checkClass(string(r.Class)); err != nil {
			return nil, bad(at+"/class", err)
		}
		if err := checkFormat(r.Format); err != nil {
			return nil, bad(at+"/format", err)
		}
		if r.TTL != "" {
			if err := checkTTL(r.TTL); err != nil {
				return nil, bad(at+"/ttl", err)
			}
		}
	}
	if f.TTL != nil {
		t, err := ttlValue(f.TTL)
		if err != nil {
			return nil, bad("/ttl", err)
		}
		c.TTL = t
	}
	c.MemoryCreate, c.SyncHome = f.MemoryCreate, f.SyncHome
	if f.MaxSize != nil {
		written, _ := validate.WrittenScalar(data, "max_size")
		n, err := parseSize(f.MaxSize, written)
		if err != nil {
			return nil, bad("/max_size", err)
		}
		c.MaxSize = n
	}
	c.Rules = append(append([]Rule{}, f.Files...), DefaultRules...)
	c.user = len(f.Files)
	for _, k := range []struct {
		ptr, val string
		class    state.Class
	}{{"/memory", f.Memory, state.ClassMemory}, {"/graph", f.Graph, state.ClassGraph}} {
		if err := c.checkFileKey(k.class, k.val); err != nil {
			return nil, bad(k.ptr, err)
		}
	}
	c.Memory, c.MemoryPinned = f.Memory, f.Memory != ""
	if c.Memory == "" {
		c.Memory = c.findMemory()
	}
	c.Graph, c.graphNamed = f.Graph, f.Graph != ""
	if env := os.Getenv("MEMORY_FILE_PATH"); c.Graph == "" && env != "" {
		c.Graph = c.relOf(env)
	}
	if c.Graph == "" {
		c.Graph = DefaultGraph
	}
	return c, nil
}

// decodeFile decodes the YAML tree of .strata.yaml into f. Numbers stay
// json.Number, as written: max_size 1.5 is not 1, and a size past int64 is
// printed as the user wrote it. A value of the wrong type is returned with
// its JSON pointer: encoding/json names a rule's field (files.ignore) but not
// the rule's index, so the rules are then decoded one by one to find it.
func decodeFile(v any, f *file) (ptr string, err error) {
	if err := decodeNumbers(v, f); err != nil {
		ptr := fieldPointer(err)
		rules, _ := v.(map[string]any)["files"].([]any)
		if ptr == "/files" || strings.HasPrefix(ptr, "/files/") {
			for i, r := range rules {
				var rule Rule
				if err := decodeNumbers(r, &rule); err != nil {
					return "/files/" + strconv.Itoa(i) + fieldPointer(err), err
				}
			}
		}
		return ptr, err
	}
	return "", nil
}

func decodeNumbers(v, dst any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(dst)
}

// fieldPointer is the JSON pointer of the field a type error names, "" for
// the value decoded itself (or another error).
func fieldPointer(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return "/" + strings.ReplaceAll(te.Field, ".", "/")
	}
	return ""
}

// AutoMemoryKey is Claude Code's project key for a work-tree root: every
// character that is not an ASCII letter or digit becomes "-". Claude Code
// runs on JavaScript, whose strings and regular expressions count UTF-16
// code units, so a character past U+FFFF (an emoji) becomes "--", and any
// other one, "é" or "项" included, one "-" (not one per UTF-8 byte). A byte
// that is not UTF-8 becomes one "-".
func AutoMemoryKey(root string) string {
	var b strings.Builder
	for _, r := range root {
		switch {
		case 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9':
			b.WriteRune(r)
		case r > 0xFFFF:
			b.WriteString("--")
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

// AutoMemory is the "~/..." path of Claude Code's auto-memory file for this repository.
func (c *Config) AutoMemory() string {
	return "~/.claude/projects/" + AutoMemoryKey(c.Root) + "/memory/MEMORY.md"
}

// L2 returns the L2 file: the one .strata.yaml names, or, while it names
// none, the first default candidate that existed when the configuration was
// loaded or last refreshed (RefreshL2). Safe for concurrent use.
func (c *Config) L2() string {
	if p := c.l2.Load(); p != nil {
		return *p
	}
	return c.Memory
}

// RefreshL2 looks for the L2 file again when .strata.yaml names none, as a
// new process would: a long-running watcher calls it for each batch, so
// that deleting the L2 file, or a pull bringing a higher candidate, moves
// its layer lines where the CLI reads them. Safe for concurrent use.
func (c *Config) RefreshL2() {
	if c.MemoryPinned {
		return
	}
	m := c.findMemory()
	c.l2.Store(&m)
}

func (c *Config) findMemory() string {
	cands := append(append([]string{}, MemoryCandidates...), c.AutoMemory())
	for _, p := range cands {
		if st, err := os.Lstat(c.Abs(p)); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return MemoryCandidates[0]
}

// relOf turns an absolute or relative file name into a kept path: repo-relative
// when inside the work tree, "~/..." when under the home directory. The
// work tree comes first, and is found through symbolic links too
// (belowReal): a name under a home directory that is a link ($HOME=/home/u,
// /home a link to var/home, as on Fedora Silverblue) naming a file of a
// work tree whose real top is /var/home/u/proj is that tree's file, not
// "~/proj/…" (attack33b F2), and so is a name through a link to a folder of
// the tree (~/mem -> proj/.claude, attack33c C3): the tree's own graph
// became a shared home graph, given a repo: line and no longer recorded.
func (c *Config) relOf(name string) string {
	if !filepath.IsAbs(name) {
		return filepath.ToSlash(filepath.Clean(name))
	}
	name = filepath.Clean(name)
	if r, ok := below(c.Root, name); ok {
		return r
	}
	if r, ok := c.belowReal(name); ok {
		return r
	}
	if c.Home != "" {
		if r, ok := below(c.Home, name); ok {
			return "~/" + r
		}
	}
	return filepath.ToSlash(name) // absolute and outside both: Classify refuses it
}

// below is name relative to dir, slash-separated, when it lies below dir
// by name.
func below(dir, name string) (string, bool) {
	r, err := filepath.Rel(dir, name)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(r), true
}

// belowReal is relOf's answer for name by what its folders are, walking up
// from its own: the nearest that exists and, links followed, lies inside
// the work tree makes name that folder's real path relative to the tree's
// real top, then the rest of name as written (where the file really is, as
// git sees it, so privacy is judged there); the nearest that is the home
// directory makes it "~/…".
func (c *Config) belowReal(name string) (string, bool) {
	realRoot, err := filepath.EvalSymlinks(c.Root)
	if err != nil {
		return "", false
	}
	var home fs.FileInfo
	if c.Home != "" {
		home, _ = os.Stat(c.Home)
	}
	for d := filepath.Dir(name); ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil {
			rest, _ := below(d, name)
			if real, err := filepath.EvalSymlinks(d); err == nil {
				if top, ok := below(realRoot, real); ok {
					return path.Join(top, rest), true
				}
			}
			if home != nil && os.SameFile(fi, home) {
				return "~/" + rest, true
			}
		}
		if d == filepath.Dir(d) {
			return "", false
		}
	}
}

// Abs is the file-system name of a kept path.
func (c *Config) Abs(rel string) string {
	if rest, ok := strings.CutPrefix(rel, "~/"); ok && c.Home != "" {
		return filepath.Join(c.Home, filepath.FromSlash(rest))
	}
	return filepath.Join(c.Root, filepath.FromSlash(rel))
}

// Rel turns a user-given file name (relative to cwd, or absolute) into a kept-path candidate.
func (c *Config) Rel(cwd, name string) string {
	if strings.HasPrefix(name, "~/") {
		return filepath.ToSlash(filepath.Clean(name))
	}
	if !filepath.IsAbs(name) {
		name = filepath.Join(cwd, name)
	}
	return c.relOf(filepath.Clean(name))
}

// checkRel refuses paths that could reach outside the work tree, and names
// with a control character, which are never kept (docs/contract.md §1).
func checkRel(rel string) error {
	switch {
	case rel == "" || rel == ".":
		return errors.New("empty path")
	case strings.HasPrefix(rel, "/") || filepath.IsAbs(rel):
		return errors.New("absolute path")
	case strings.ContainsRune(rel, '\\'):
		return errors.New("backslash in path")
	case hasControl(rel):
		return errors.New("control character in path")
	}
	for _, seg := range strings.Split(rel, "/") {
		if seg == ".." || seg == "." || seg == "" {
			return errors.New(`path has an empty, "." or ".." segment`)
		}
		if seg == ".git" {
			return errors.New("path inside .git")
		}
	}
	return state.CheckPath(rel)
}

// Transient reports whether a base name is an editor's temporary, swap,
// backup or lock file, which is never kept even when a glob matches it.
func Transient(base string) bool {
	switch {
	case strings.HasPrefix(base, "."), // vim .x.swp, emacs .#x, atomic-save temps
		strings.HasPrefix(base, "#"),
		strings.HasSuffix(base, "~"),
		strings.HasSuffix(base, ".swp"), strings.HasSuffix(base, ".swx"),
		strings.HasSuffix(base, ".tmp"), strings.Contains(base, ".tmp."),
		base == "4913":
		return true
	}
	return false
}

// Classify reports whether rel is a kept file and how it is checked. Paths
// with "..", absolute paths, control characters and editors' temporary files
// are never kept, and neither are private files (see Private) unless the
// user's git configuration keeps them (KeepPrivate).
func (c *Config) Classify(rel string) (Kept, bool) {
	k, why := c.classify(rel)
	return k, why == ""
}

// WhyNested starts the reason a file inside another repository nested in
// the work tree is not kept (Nested); no rule keeps such a file.
const WhyNested = "inside another git repository, "

// WhyLinkAbove is why a file under link, a symbolic link (to target) to
// the folder holding it or one above it, is not kept (Config.LinkAbove).
func WhyLinkAbove(link, target string) string {
	return whyLinkAbove + state.ShownPath(link) + " -> " + state.ShownPath(target) + ", a link loop"
}

const whyLinkAbove = "under a symbolic link to a folder above it, "

// NeverKept reports whether why, a reason privacy gives, is one no setting
// overrides: a nested repository's file, or one under a link loop.
func NeverKept(why string) bool {
	return strings.HasPrefix(why, WhyNested) || strings.HasPrefix(why, whyLinkAbove)
}

// WhyOutside is why a layer file named outside the work tree and the home
// directory ($MEMORY_FILE_PATH=/data/memory.jsonl) is neither kept nor
// written.
const WhyOutside = "outside the work tree and the home directory"

// WhyInRepo is why the graph file under the home directory is neither
// kept, read nor written when it lies inside another git repository: a
// folder on the way from it up to the home directory (not included) holds
// a .git entry (file or directory: a work tree, dir its top) or is itself a
// git directory (gitDir). That repository's strata would record what this
// one writes there, and push it (attack33b F1: $MEMORY_FILE_PATH=
// ~/projB/.claude/memory.jsonl while working in project A). The home
// directory counts as any folder (attack33c C6): a strata repository there
// (dotfiles) would keep a global ~/.mem/memory.jsonl as its own graph, and
// record and publish every other project's state written to it.
func WhyInRepo(dir string, gitDir bool) string {
	if gitDir {
		return whyInRepoGitDir + state.TermSafe(dir) + ")"
	}
	return whyInRepo + state.TermSafe(dir) + ")"
}

const (
	whyInRepo       = "inside another repository's work tree ("
	whyInRepoGitDir = "inside another repository's git directory ("
)

// InOtherRepo reports whether why, a reason Private gives, is WhyInRepo's.
func InOtherRepo(why string) bool {
	return strings.HasPrefix(why, whyInRepo) || strings.HasPrefix(why, whyInRepoGitDir)
}

// inOtherRepo is WhyInRepo for the home file rel ("~/…") when it lies
// inside another repository, else "". Where the file really is decides,
// as for git: the nearest existing folder of its name is resolved through
// symbolic links, and that real path is walked up to the file system's
// root (attack33c C2: with ~/mem a link to projB/.claude, no folder of the
// name "~/mem/memory.jsonl" holds a .git, and project A wrote its state
// into project B's own graph, which B recorded and pushed). Only folders
// that exist are asked, the home directory among them (WhyInRepo).
func (c *Config) inOtherRepo(rel string) string {
	real, ok := realDir(filepath.Dir(c.Abs(rel)))
	if !ok {
		return ""
	}
	realHome, _ := filepath.EvalSymlinks(c.Home)
	for d := real; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return WhyInRepo(c.shownDir(d, realHome), false)
		}
		if isGitDir(d) {
			return WhyInRepo(c.shownDir(d, realHome), true)
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}

// realDir is dir with symbolic links resolved, when dir or a folder above
// it exists: the nearest that does, resolved, then the rest of dir.
func realDir(dir string) (string, bool) {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if real, err := filepath.EvalSymlinks(d); err == nil {
			rest, _ := below(d, dir)
			return filepath.Join(real, filepath.FromSlash(rest)), true
		}
		if d == filepath.Dir(d) {
			return "", false
		}
	}
}

// shownDir is the folder d (a real path) as messages show it: "~/…" below
// the home directory (realHome, its real path), else as it is.
func (c *Config) shownDir(d, realHome string) string {
	if realHome == "" {
		return d
	}
	switch r, ok := below(realHome, d); {
	case !ok:
		return d
	case r == ".":
		return "~"
	default:
		return "~/" + r
	}
}

// isGitDir reports whether dir looks like a git directory, as git asks:
// a HEAD file, and objects and refs folders.
func isGitDir(dir string) bool {
	head, err := os.Lstat(filepath.Join(dir, "HEAD"))
	if err != nil || !head.Mode().IsRegular() {
		return false
	}
	for _, sub := range []string{"objects", "refs"} {
		if fi, err := os.Stat(filepath.Join(dir, sub)); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

// Why a path that matches a rule is not kept.
const (
	whyNot       = "no rule"
	whyIgnored   = "ignored by git"
	whyLocalJSON = "a *.local.json file (private by convention)"
)

// WhyUntracked is the reason a file that git does not track, and that only
// a rule of .strata.yaml keeps (no built-in rule), is private (Tracked).
const WhyUntracked = "git does not track it and only a " + FileName + " rule keeps it"

// WhyStagedOnly is the reason a file git tracks, that no commit of HEAD
// holds yet (only staged: `git add` without the commit), and that only a
// rule of .strata.yaml keeps, is private (Committed).
const WhyStagedOnly = "git has it only staged, in no commit yet, and only a " + FileName + " rule keeps it"

// WhyBehindLink is the reason a file that a built-in rule keeps by a name
// reaching it through link, a symbolic link git tracks, is private while
// git has no commit of it where it really is (LinkedByGit).
func WhyBehindLink(link string) string {
	return whyBehindLink + state.ShownPath(link) + " that git tracks, and git has no commit of it where it really is"
}

const whyBehindLink = "reached through the symbolic link "

// WhyHidden is the reason a tracked file whose local changes git is told
// to ignore (flag: skip-worktree or assume-unchanged, Hidden) is private.
func WhyHidden(flag string) string {
	return whyHidden + flag + ")"
}

const whyHidden = "git is told to ignore its local changes ("

// IndexDecides reports whether why, a reason Private gives, is one git's
// index may take back with no change to the file: git does not track it
// (WhyUntracked: a `git add` then a `git commit` keep it; WhyStagedOnly:
// the commit keeps it), git ignores it (a file git tracks
// is not ignored: `git add -f`; WhyUnread likewise), or its index entry tells git to ignore
// its local changes (WhyHidden: `git update-index --no-skip-worktree`). A
// watcher judges the files it passed over for such a reason again when
// the index changes.
func IndexDecides(why string) bool {
	return why == WhyUntracked || why == WhyStagedOnly || strings.HasPrefix(why, whyIgnored) || strings.HasPrefix(why, whyUnread) || strings.HasPrefix(why, whyHidden) || strings.HasPrefix(why, whyBehindLink)
}

// Private reports why a path that a rule would keep is withheld as private
// ("" when it is not): git ignores it, git filters it (a clean/smudge
// driver such as git-crypt's: git publishes only the cleaned form), or it
// is a *.local.json file (Claude Code's settings.local.json holds API
// keys), or git is told to ignore its local changes (Hidden), or git does
// not track it and only a .strata.yaml rule keeps it
// (Tracked). Only the user's git configuration keeps it anyway
// (KeepPrivate), never a rule.
func (c *Config) Private(rel string) string {
	if _, why := c.classify(rel); why != whyNot {
		return why
	}
	return ""
}

// WhyFiltered is the reason a path git passes through the filter driver
// named driver is private, as Private and status give it. The name comes
// from a .gitattributes a clone may have brought: it is quoted when it is
// not plain text.
func WhyFiltered(driver string) string {
	return "git filters it (filter=" + state.TermSafe(driver) + ")"
}

// WhyFilteredBefore is the reason a path that the .gitattributes files of
// commit at (a short id, or "HEAD") give the filter driver, and the ones on
// disk do not, is private.
func WhyFilteredBefore(at, driver string) string {
	if at == "HEAD" {
		return "git filters it by the .gitattributes files HEAD commits (filter=" + state.TermSafe(driver) + "; the ones on disk no longer do)"
	}
	return "git filtered it at commit " + at + " (filter=" + state.TermSafe(driver) + "; a .gitattributes change since no longer does)"
}

// WhyFilterUnread is the reason a file, tracked or not, is private when
// the .gitattributes files of HEAD and of the earlier HEADs strata kept
// cannot be read (why: HEAD's commit missing from the object store,
// refs/strata/gitrules damaged): whether one of them gave it a filter
// (git-crypt), so whether the work tree holds a plaintext git publishes
// only in its cleaned form, is unknown. No driver is named: none is known.
// Unlike the other reasons, it says nothing about the file, only that the
// rules could not be read: a sync refusing a version for it does not note
// that version as private (RulesUnread), so the file is kept again, its
// versions published, once the rules can be read and hold nothing against
// it.
func WhyFilterUnread(why string) string {
	return whyFilterUnread + why + "), so whether git filters it is unknown"
}

const whyFilterUnread = "the .gitattributes files of HEAD and earlier HEADs cannot be read ("

// WhyIgnoreUnread is the reason a file git does not track is private when
// the .gitignore files of HEAD and earlier HEADs cannot be read (why: HEAD
// unreadable, refs/strata/gitrules damaged): whether one of them ignored it
// is unknown. It said "ignored by git at commit ? (…)", as if a rule had
// matched (attack32 LOW).
func WhyIgnoreUnread(why string) string {
	return whyIgnoreUnread + why + "), so whether git ignored it is unknown"
}

const whyIgnoreUnread = "the .gitignore files of HEAD and earlier HEADs cannot be read ("

// RulesUnread reports whether why, a reason Private gives (with or without
// sync's "private: " before it), says only that git's earlier rules could
// not be read (WhyFilterUnread, WhyIgnoreUnread).
func RulesUnread(why string) bool {
	why = strings.TrimPrefix(why, "private: ")
	return strings.HasPrefix(why, whyFilterUnread) || strings.HasPrefix(why, whyIgnoreUnread)
}

// WhyUnread is the reason a file git does not track is private when git's
// rules cannot be read as git reads them (why: a core.excludesFile value
// git fails to expand, gitstore.Ignores.Unread): git itself stops there, so
// what it would ignore is unknown.
func WhyUnread(why string) string {
	return whyUnread + why + "; git stops there too, so every file it does not track counts as ignored)"
}

const whyUnread = "git's ignore rules cannot be read ("

// WhyIgnoredBefore is the reason a path that the .gitignore files of
// commit at (a short id, or "HEAD") ignore, and the ones on disk do not, is
// private.
func WhyIgnoredBefore(at string) string {
	if at == "HEAD" {
		return "ignored by the .gitignore files HEAD commits (the ones on disk no longer ignore it)"
	}
	return "ignored by git at commit " + at + " (a .gitignore change since no longer ignores it)"
}

// classify is Classify's answer and, when rel is not kept, why: whyNot
// when no rule matches, else the reason privacy gives.
func (c *Config) classify(rel string) (Kept, string) {
	if c.Memo == nil {
		return c.judge(rel)
	}
	k, why, ok, put := c.Memo.Lookup(rel)
	if ok {
		return k, why
	}
	k, why = c.judge(rel)
	if put != nil {
		put(k, why)
	}
	return k, why
}

// ClassifyMemo is Config.Memo: Lookup returns the answer remembered for
// rel (ok), else put, which remembers the answer judged afresh when it may
// be (nil when it may not: it depends on something read anew each time).
type ClassifyMemo interface {
	Lookup(rel string) (k Kept, why string, ok bool, put func(Kept, string))
}

// judge is classify without the memo.
func (c *Config) judge(rel string) (Kept, string) {
	// The layer files' names come from .strata.yaml, which Load checks, or
	// from $MEMORY_FILE_PATH, which it does not: no control character either way.
	if (rel == c.L2() || rel == c.Graph || c.OtherMemory(rel)) && !hasControl(rel) {
		if !strings.HasPrefix(rel, "~/") && checkRel(rel) != nil {
			return Kept{}, WhyOutside // $MEMORY_FILE_PATH naming /elsewhere or ../elsewhere
		}
		k := Kept{Path: rel, Class: state.ClassMemory, Schema: "markdown", TTL: c.TTL}
		if rel == c.Graph {
			k.Class, k.Schema = state.ClassGraph, "mcp-memory"
		}
		// The escape hatch works for the layer files too: a user rule may
		// ignore them or give them a schema of the user's own.
		named := false
		if r, ok := c.userRule(rel); ok {
			if r.Ignore {
				return Kept{}, whyNot
			}
			if r.Schema != "" {
				k.Schema = r.Schema
			}
			named = r.Glob == rel
		}
		if strings.HasPrefix(rel, "~/") {
			if rel == c.Graph {
				if why := c.inOtherRepo(rel); why != "" {
					return Kept{}, why
				}
			}
			return k, ""
		}
		return k, c.privacy(rel, named, c.layerNamedOnly(rel))
	}
	if checkRel(rel) != nil || strings.HasPrefix(rel, "~/") || Transient(path.Base(rel)) || hasControl(rel) {
		return Kept{}, whyNot
	}
	for i, r := range c.Rules {
		if !globMatch(r.Glob, rel) {
			continue
		}
		if r.Ignore {
			return Kept{}, whyNot
		}
		k := Kept{Path: rel, Class: r.Class, Schema: r.Schema, Format: r.Format, TTL: r.TTL}
		if k.Class == "" || k.Schema == "" {
			d := defaultFor(rel)
			if k.Class == "" {
				k.Class = d.Class
			}
			if k.Schema == "" {
				k.Schema = d.Schema
			}
		}
		if k.Class == "" {
			k.Class = state.ClassClaudeJSON
		}
		if k.Schema == "" {
			k.Schema = "json"
		}
		if k.TTL == "" {
			k.TTL = c.TTL
		}
		if why := c.privacy(rel, i < c.user && r.Glob == rel, i < c.user && !builtin(rel)); why != "" {
			return Kept{}, why
		}
		return k, ""
	}
	return Kept{}, whyNot
}

// builtin reports whether a built-in rule (DefaultRules) matches rel: a
// state file strata keeps without any .strata.yaml, untracked or not (an
// agent's state file is usually untracked; keeping it is the product).
func builtin(rel string) bool {
	for _, r := range DefaultRules {
		if globMatch(r.Glob, rel) {
			return true
		}
	}
	return false
}

// layerNamedOnly reports whether rel is a layer file only .strata.yaml
// names: its memory: or graph: key names rel, which is none of the places
// strata looks for the layer file without it (MemoryCandidates,
// DefaultGraph). As a rule of .strata.yaml does, such a key keeps a file
// git tracks and HEAD commits, not the user's own untracked notes: the
// file may come with the repository from anyone who can push (a committed
// `memory: notes/MEMORY.md` would otherwise have sync publish the
// notes a user keeps there and never gave to git). $MEMORY_FILE_PATH
// is the user's own setting: it names no such file.
func (c *Config) layerNamedOnly(rel string) bool {
	switch {
	case rel == c.Memory && c.MemoryPinned:
		return !slices.Contains(MemoryCandidates, rel)
	case rel == c.Graph && c.graphNamed:
		return rel != DefaultGraph
	}
	return false
}

// OnlyUserRule reports whether rel is matched first by a rule of
// .strata.yaml and by no built-in rule, so that it is kept only while git
// tracks it or the user's git configuration keeps it (Tracked): sync asks
// git itself whether it tracks such a path before it publishes it.
func (c *Config) OnlyUserRule(rel string) bool {
	if c.layerNamedOnly(rel) {
		return true
	}
	if rel == c.L2() || rel == c.Graph || c.OtherMemory(rel) || builtin(rel) {
		return false
	}
	for i, r := range c.Rules {
		if globMatch(r.Glob, rel) {
			return i < c.user && !r.Ignore
		}
	}
	return false
}

// Named reports whether rel is kept even when it is private: the user's
// git configuration keeps it (strata.keepPrivate; see privacy). sync asks
// git itself whether any other kept path is private.
func (c *Config) Named(rel string) bool {
	return c.KeepPrivate != nil && c.KeepPrivate(rel)
}

// privacy is why a matched path is withheld, "" when it is kept. A
// private file is kept only when the user's git configuration says so
// (KeepPrivate). A .strata.yaml rule naming it exactly does not: that file
// may come with the repository (committed, or staged by a pull waiting for
// its merge commit, or left untracked by a reset), written by anyone who
// can push, who would read the file off the remote after the next sync
// (attack19-remote 5, verify-remote N2); the reason then says how to keep it.
// userOnly is set when only a rule of .strata.yaml matches rel (no built-in
// one): then a file git does not track is private too (Tracked).
func (c *Config) privacy(rel string, named, userOnly bool) string {
	if c.LinkAbove != nil {
		if why := c.LinkAbove(rel); why != "" {
			return why
		}
	}
	if c.Nested != nil {
		if repo := c.Nested(rel); repo != "" {
			return WhyNested + repo
		}
	}
	why := ""
	switch {
	case strings.HasSuffix(state.FoldName(path.Base(rel)), ".local.json"):
		// compared as a case-insensitive file system compares names, on
		// every one: on a Mac .claude/Settings.Local.json is the user's
		// settings.local.json (attack24 G2)
		why = whyLocalJSON
	case c.Ignored != nil && c.Ignored(rel):
		why = whyIgnored
	}
	if why == "" && c.Filter != nil {
		if driver := c.Filter(rel); driver != "" {
			why = WhyFiltered(driver)
		}
	}
	if why == "" && c.PrivateBefore != nil {
		why = c.PrivateBefore(rel)
	}
	if why == "" && c.Hidden != nil {
		if flag := c.Hidden(rel); flag != "" {
			why = WhyHidden(flag)
		}
	}
	if why == "" && userOnly && c.Tracked != nil && !c.Tracked(rel) {
		// the reason itself says a .strata.yaml rule does not keep it
		why, named = WhyUntracked, false
	}
	if why == "" && userOnly && c.Committed != nil && !c.Committed(rel) {
		why, named = WhyStagedOnly, false
	}
	if why == "" && !userOnly && c.LinkedByGit != nil {
		if link := c.LinkedByGit(rel); link != "" && (c.Tracked != nil && !c.Tracked(rel) || c.Committed != nil && !c.Committed(rel)) {
			why, named = WhyBehindLink(link), false
		}
	}
	switch {
	case why == "", c.KeepPrivate != nil && c.KeepPrivate(rel):
		return ""
	case named:
		return why + "; " + FileName + " names it, but only your git config keeps a private file (to keep it: git config --add strata.keepPrivate " + state.ShellWord(rel) + ")"
	}
	return why
}

// userRule is the first of the user's own rules matching rel.
func (c *Config) userRule(rel string) (Rule, bool) {
	for _, r := range c.Rules[:c.user] {
		if globMatch(r.Glob, rel) {
			return r, true
		}
	}
	return Rule{}, false
}

// Withheld lists the files the last ScanAll found that a rule would keep but
// that are private (see Private), so init and status can say so.
func (c *Config) Withheld() []string { return c.private }

// TempDirs lists the folders (repo-relative, "." for the root) in which the
// last Scan saw strata's temp files: a kept file's next version being
// written, or the leftover of a process killed while writing it.
func (c *Config) TempDirs() []string { return c.temps }

// KeptNameDirs lists the directories the last ScanAll found at a name a rule
// would keep as a file, below which no file can be kept (so Scan does not
// descend into them): PhaseOutcomes/auth/001-plan.yaml made a directory.
// Scan does not list them; the decisions gate does, since a Phase Outcome
// there may hide a decision.
func (c *Config) KeptNameDirs() []string { return c.dirs }

var ttlRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([0-9]+)([smhd])$`) })

func checkTTL(s string) error {
	if s == "off" || ttlRE().MatchString(s) {
		return nil
	}
	return fmt.Errorf("%q: want off or a number and one of s, m, h, d (e.g. 48h)", s)
}

// ParseTTL reads a ttl like "24h", "90m" or "7d" (the form checkTTL accepts
// besides "off").
func ParseTTL(s string) (time.Duration, error) {
	m := ttlRE().FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("ttl %q: want a number and one of s, m, h, d", s)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil || n > 1<<31 {
		return 0, fmt.Errorf("ttl %q: too large", s)
	}
	unit := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour}[m[2]]
	return time.Duration(n) * unit, nil
}

func ttlValue(v any) (string, error) {
	switch x := v.(type) {
	case bool:
		if !x {
			return "off", nil
		}
	case string:
		return x, checkTTL(x)
	}
	return "", errors.New("want off or a duration like 48h")
}

func defaultFor(rel string) Rule {
	for _, r := range DefaultRules {
		if globMatch(r.Glob, rel) {
			return r
		}
	}
	return Rule{}
}

// LiteralGlob is a glob that matches the path rel and no other: each of
// path.Match's wildcards in it ("*", "?", "[") as a class of that one
// character ("[*]"), so a rule made for phase-03-*.json does not match
// phase-03-search.json. A kept path holds no backslash (checkRel), the
// fourth special character; "{" and "]" are not special.
func LiteralGlob(rel string) string {
	return globSpecial.Replace(rel)
}

var globSpecial = strings.NewReplacer("*", "[*]", "?", "[?]", "[", "[[]")

// globMatch is path.Match(glob, rel) (a malformed glob matches nothing) that
// settles most paths without it: a glob without wildcards matches only
// itself, and any other only paths that start with its text before the
// first wildcard. Every path strata lists is classified several times per
// command; most rules are literal names or do not share the path's prefix.
func globMatch(glob, rel string) bool {
	i := strings.IndexAny(glob, `*?[\`)
	if i < 0 {
		return glob == rel
	}
	if !strings.HasPrefix(rel, glob[:i]) {
		return false
	}
	ok, _ := path.Match(glob, rel)
	return ok
}

// hasControl reports whether a name holds a control character: C0, DEL or
// C1 (U+0080–U+009F; U+009B is a terminal's CSI). It is the one judge of
// "control character in a name" (checkRel, Classify, BadName). Bytes that
// are not UTF-8 do not count: git keeps such names, and strata keeps them
// too, quoting them wherever it prints them (state.TermSafe).
func hasControl(s string) bool {
	return strings.IndexFunc(s, unicode.IsControl) >= 0
}

// WatchDir reports whether a directory (repo-relative, "." for the root) can
// hold kept files or their parent directories, so a watcher descends into it.
func (c *Config) WatchDir(rel string) bool {
	if rel == "." || rel == "" {
		return true
	}
	if strings.HasPrefix(rel, "~/") {
		return false
	}
	segs := strings.Split(rel, "/")
	prefixOf := func(glob string) bool {
		gs := strings.Split(glob, "/")
		if len(gs) <= len(segs) { // the last glob segment names files
			return false
		}
		for i, s := range segs {
			if ok, _ := path.Match(gs[i], s); !ok {
				return false
			}
		}
		return true
	}
	for _, r := range c.Rules {
		if !r.Ignore && prefixOf(r.Glob) {
			return true
		}
	}
	if !c.MemoryPinned && slices.ContainsFunc(MemoryCandidates, prefixOf) {
		return true
	}
	return prefixOf(c.L2()) || prefixOf(c.Graph)
}

// OtherMemory reports whether rel is one of the default L2 candidates other
// than the L2 file itself, kept as a memory file too while .strata.yaml
// names none: the L2 file is the first candidate that exists, so a `git
// pull` that brings a teammate's .claude/MEMORY.md moves L2 there, and the
// file that was L2 stays kept (recorded, synced, readable in the history)
// instead of turning into a recorded path no rule keeps.
func (c *Config) OtherMemory(rel string) bool {
	return !c.MemoryPinned && rel != c.L2() && slices.Contains(MemoryCandidates, rel)
}

// Scan lists the kept files that exist now: regular files and symlinks (which
// are reported, never followed), sorted. Unreadable directories are skipped.
// A symbolic link where a directory of kept files could be is descended when
// FollowDir follows it, its files listed under the link's name.
func (c *Config) Scan() ([]string, error) {
	out, _, err := c.ScanAll()
	return out, err
}

// BadName reports whether a path would be kept but for a control character
// (a newline, a tab...) in its name: such a file is never recorded, since its
// name cannot stand in a trailer or an error line, and is reported instead.
func (c *Config) BadName(rel string) bool {
	if !hasControl(rel) {
		return false
	}
	clean := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '_'
		}
		return r
	}, rel)
	_, ok := c.Classify(clean)
	return ok
}

// ScanAll is Scan that also lists the files BadName refuses.
func (c *Config) ScanAll() (kept, badNames []string, err error) {
	var out, private, temps, dirs []string
	var visit func(dir, rel string)
	visit = func(dir, rel string) {
		entries, err := readDirLong(c.Root, dir, rel)
		if err != nil {
			return // unreadable: skipped
		}
		for _, e := range entries {
			abs, r := filepath.Join(dir, e.Name()), path.Join(rel, e.Name())
			if e.IsDir() || e.Type()&fs.ModeSymlink != 0 && c.WatchDir(r) && c.FollowDir != nil && c.FollowDir(r) {
				if c.WatchDir(r) {
					visit(abs, r)
				} else if _, why := c.classify(r); why == "" && e.IsDir() {
					dirs = append(dirs, r)
				}
				continue
			}
			if atomicfile.IsTemp(r) {
				if len(temps) == 0 || temps[len(temps)-1] != rel {
					temps = append(temps, rel)
				}
				continue
			}
			if _, why := c.classify(r); why == "" {
				out = append(out, r)
			} else if why != whyNot {
				private = append(private, r)
			} else if c.BadName(r) {
				badNames = append(badNames, r)
			}
		}
	}
	visit(c.Root, ".")
	for _, extra := range []string{c.L2(), c.Graph} {
		if strings.HasPrefix(extra, "~/") && !InOtherRepo(c.Private(extra)) {
			if _, err := os.Lstat(c.Abs(extra)); err == nil {
				out = append(out, extra)
			}
		}
	}
	sort.Strings(out)
	sort.Strings(badNames)
	sort.Strings(private)
	sort.Strings(dirs)
	c.private, c.temps, c.dirs = private, temps, dirs
	return out, badNames, nil
}

// readDirLong reads the directory dir, rel under root. A dir whose
// absolute name is longer than PATH_MAX (ENAMETOOLONG) is read through
// root, one name at a time, so the kept files in it are listed, and each
// is then reported as the file that cannot be read that it is (attack36
// M4), never left out of record, status and validate without a word.
func readDirLong(root, dir, rel string) ([]os.DirEntry, error) {
	entries, err := os.ReadDir(dir)
	if !errors.Is(err, syscall.ENAMETOOLONG) {
		return entries, err
	}
	r, rerr := os.OpenRoot(root)
	if rerr != nil {
		return nil, err
	}
	defer r.Close()
	f, rerr := r.Open(filepath.FromSlash(rel))
	if rerr != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// Extra lists the kept files outside the work tree (absolute names) for a
// watcher: the L2 and L3 files when they are there, and, while .strata.yaml
// names no L2 file, Claude Code's auto-memory file, which becomes L2 once
// no candidate in the work tree exists (RefreshL2): a watcher started
// before then sees its edits too.
func (c *Config) Extra() []string {
	var out []string
	ps := []string{c.L2(), c.Graph}
	if !c.MemoryPinned {
		ps = append(ps, c.AutoMemory())
	}
	for _, p := range ps {
		if strings.HasPrefix(p, "~/") && c.Home != "" && !slices.Contains(out, c.Abs(p)) {
			out = append(out, c.Abs(p))
		}
	}
	return out
}

// sizeForm splits max_size as written into its digits and unit, ok when it
// is written as a size: a whole number of bytes in decimal digits (no sign;
// leading zeros are still decimal, 010MB is 10MB), alone or followed at once
// by B, KB, MB or GB in capitals (binary: 1KB is 1024 bytes). Whether it is
// positive is parseSizeValue's question.
func sizeForm(s string) (digits, unit string, ok bool) {
	for _, u := range []string{"KB", "MB", "GB", "B"} {
		if rest, cut := strings.CutSuffix(s, u); cut {
			s, unit = rest, u
			break
		}
	}
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return "", "", false
	}
	return s, unit, true
}

// sizeHint is what an invalid max_size is told to be, after the reason.
const sizeHint = "want a positive whole number of bytes in decimal digits (1048576) or one followed by B, KB, MB or GB (10MB)"

// parseSize parses max_size: v is its value as decoded, written its text in
// .strata.yaml ("" when unknown). Only sizeForm is a size: 0x4000000, 1e9,
// 2.0, +64, 64mb and "64 MB" are refused, never read as some number; 064 is
// 64, as decimal digits read (YAML 1.1 would read it as octal 52). A size of
// zero, past what an int64 holds, or over MaxSizeCeiling is refused, never
// wrapped to a negative limit. Every refusal is one line naming the value as
// written (quoted when YAML read a string) and, but for a size too large,
// the same hint.
func parseSize(v any, written string) (int64, error) {
	n, err := parseSizeValue(v, written)
	if err == nil && n > MaxSizeCeiling {
		return 0, fmt.Errorf("size %s is larger than strata reads a kept file: at most %dMB (%d bytes)", shownSize(v, written), int64(MaxSizeCeiling>>20), int64(MaxSizeCeiling))
	}
	return n, err
}

// shownSize is max_size as an error names it: as written, quoted when YAML
// read it as a string.
func shownSize(v any, written string) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case json.Number:
		if written != "" {
			return written
		}
		return string(x)
	}
	if written != "" {
		return written
	}
	return fmt.Sprint(v)
}

func parseSizeValue(v any, written string) (int64, error) {
	shown := shownSize(v, written)
	var text string
	switch x := v.(type) {
	case json.Number:
		text = written
		if text == "" {
			text = string(x)
		}
		if _, _, ok := sizeForm(text); !ok {
			// the reason that says most: negative, not whole, or only
			// not written as a size is
			r, ok := new(big.Rat).SetString(string(x))
			switch {
			case ok && r.Sign() < 0:
				return 0, fmt.Errorf("size %s is negative: %s", shown, sizeHint)
			case ok && !r.IsInt():
				return 0, fmt.Errorf("size %s is not a whole number of bytes: %s", shown, sizeHint)
			}
			return 0, fmt.Errorf("invalid size %s: %s", shown, sizeHint)
		}
	case string:
		text = x
		if _, _, ok := sizeForm(text); !ok {
			return 0, fmt.Errorf("invalid size %s: %s", shown, sizeHint)
		}
	case bool:
		return 0, fmt.Errorf("invalid size %t: %s", x, sizeHint)
	default:
		return 0, fmt.Errorf("invalid size (%s): %s", kindName(reflect.TypeOf(v)), sizeHint)
	}
	digits, unit, _ := sizeForm(text)
	if strings.Trim(digits, "0") == "" {
		return 0, fmt.Errorf("size %s is zero: %s", shown, sizeHint)
	}
	mult := map[string]int64{"": 1, "B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}[unit]
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("size %s is too large", shown)
	}
	return n * mult, nil
}

// kindName says what a configuration value of type t looks like in YAML.
func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Slice:
		return "a list"
	case reflect.Struct, reflect.Map:
		return "a mapping"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64, reflect.Float64:
		return "a number"
	}
	return "a string"
}
