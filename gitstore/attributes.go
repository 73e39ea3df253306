package gitstore

import (
	"os"

	"path/filepath"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/strata-dev/strata/gitstore/internal/cquote"
)

// Attributes answers git's question "which filter driver does this path go
// through?" (its filter attribute, gitattributes(5)) in-process, for the
// commands that must start fast; sync asks git itself before it publishes
// anything (Store.CheckFilter). A file git filters — git-crypt's, git-lfs's
// or transcrypt's filter=NAME — is published by git only in its cleaned
// (encrypted, or pointer) form, so strata withholds it as private.
//
// It reads what git reads, highest precedence first: .git/info/attributes,
// the .gitattributes of the path's folder and of each folder above it (the
// deeper winning), core.attributesFile (else $XDG_CONFIG_HOME/git/attributes)
// and the system's /etc/gitattributes (none with $GIT_ATTR_NOSYSTEM). Within
// a file a later line wins. Patterns are gitignore's, without negation (a
// "!pattern" line is dropped, as git drops it) and without a folder's
// pattern reaching the files inside it ("dir/" names no file; "dir/**"
// does); a pattern with no slash matches the base name at any depth below
// its file's folder; with core.ignorecase case does not count. "-filter"
// unsets the attribute and "!filter" makes it unspecified again, both
// overriding lower lines; a macro ("[attr]NAME ..." in the root
// .gitattributes, info/attributes or the global and system files) set on a
// path sets what it names. A line git refuses (an invalid attribute name, a
// line of 2048 bytes or more) is dropped, and so is a file over 100 MB or a
// .gitattributes that is a symbolic link, as git does.
//
// The files are read lazily: the global ones and the root's on the first
// question, each folder's .gitattributes once, when a question reaches it,
// so asking about one kept file reads a handful of small files. A
// .gitattributes only in git's index (deleted from the work tree) is not
// read; git reads it, and sync asks git.
type Attributes struct {
	root      string
	gitDir    string
	commonDir string
	settings  func() ignoreSettings // as Ignores's
	mu        sync.Mutex
	loaded    bool
	fold      bool                   // core.ignorecase
	info      []attrLine             // info/attributes: the highest precedence
	global    []attrLine             // core.attributesFile, then the system file: the lowest
	dirs      map[string][]attrLine  // each folder's .gitattributes, by repo-relative folder ("" = root)
	macros    map[string][]attrState // by name, the definition of highest precedence
	// With store set, the .gitattributes files are the blobs blobs names
	// by folder (an earlier HEAD's, see FilteredBefore), not the work tree's.
	store *Store
	blobs map[string]plumbing.Hash
}

// attrLine is one line of an attributes file: a pattern and the states it
// gives, or (pattern "") a macro's definition. A pattern line's states are
// parsed when its pattern first matches a path asked about (most lines of
// a long .gitattributes never do): raw holds them until then, and a line
// whose states git would refuse then matches nothing.
type attrLine struct {
	base    string // the folder of the file it is in, repo-relative, "" for the root or a file outside the tree
	pattern string // leading "/" removed
	noDir   bool   // no slash in pattern: it matches the base name
	prefix  int    // the length of pattern's literal start (literalStart)
	macro   string // the name this line defines, when it is a macro
	raw     string // the states as written, until parsed
	parsed  bool
	bad     bool // git refuses the line: an invalid attribute name
	states  []attrState
}

// attrState is one attribute a line sets: kind is '+' (set), '-' (unset),
// '!' (unspecified) or '=' (set to value).
type attrState struct {
	name  string
	kind  byte
	value string
}

// git's bound on an attribute line (attr.c); a file's is ruleFileMax.
const attrMaxLine = 2048

// Attributes returns the attribute rules of this work tree. Nothing is read
// until the first question.
func (s *Store) Attributes() *Attributes {
	return &Attributes{root: s.root, gitDir: s.gitDir, commonDir: s.commonDir, settings: s.ruleSettings, dirs: map[string][]attrLine{}}
}

// Filter returns the filter driver git runs the repo-relative,
// slash-separated path through ("crypt" for filter=crypt), "" when none: the
// attribute unset, unspecified, or set without a value.
func (a *Attributes) Filter(rel string) string {
	if a == nil || rel == "" {
		return ""
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.load()
	segs := strings.Split(rel, "/")
	name := segs[len(segs)-1]
	if a.fold {
		rel, name = asciiLower(rel), asciiLower(name)
	}
	f := attrFill{macros: a.macros, seen: map[string]bool{}}
	files := [][]attrLine{a.info}
	for i := len(segs) - 1; i >= 0; i-- {
		files = append(files, a.dir(strings.Join(segs[:i], "/")))
	}
	files = append(files, a.global)
	for _, lines := range files {
		for i := len(lines) - 1; i >= 0; i-- {
			l := &lines[i] // parsed in place: the file's lines are cached
			if l.macro == "" && l.matches(rel, name, a.fold) && l.parse() && f.fill(l.states) {
				return f.filter
			}
		}
	}
	return ""
}

// parse reads the line's states on first need; it reports whether git
// takes the line.
func (l *attrLine) parse() bool {
	if !l.parsed {
		l.parsed = true
		l.states, l.bad = parseAttrStates(l.raw)
		l.raw = ""
	}
	return !l.bad
}

// attrFill collects the filter attribute as git collects attributes (attr.c
// fill_one): lines from the highest precedence down, a line's states from
// the last, the first state an attribute meets deciding it; a macro set
// there decides, in its definition's order, what nothing above decided.
type attrFill struct {
	macros map[string][]attrState
	seen   map[string]bool // attributes already decided
	filter string
}

// fill applies one line's states; it reports whether filter is decided.
func (f *attrFill) fill(states []attrState) bool {
	for i := len(states) - 1; i >= 0; i-- {
		st := states[i]
		if f.seen[st.name] {
			continue
		}
		f.seen[st.name] = true
		if st.name == "filter" {
			if st.kind == '=' {
				f.filter = st.value
			}
			return true
		}
		if def, ok := f.macros[st.name]; ok && st.kind == '+' && f.fill(def) {
			return true
		}
	}
	return false
}

// matches reports whether the line's pattern names the file rel (base name
// name), both already folded under core.ignorecase.
func (l attrLine) matches(rel, name string, fold bool) bool {
	if l.noDir {
		return wildmatch(l.pattern, name, false, fold)
	}
	if l.base != "" {
		rest, ok := strings.CutPrefix(rel, l.base+"/")
		if !ok {
			return false
		}
		rel = rest
	}
	// git's match_pathname, as for ignore patterns: ".claude**/creds.json"
	// names .claude/mcp/creds.json (attack20-final A1)
	pattern, rel, may, done := cutLiteralStart(l.pattern, l.prefix, rel, fold)
	if !may || done {
		return done
	}
	return wildmatch(pattern, rel, true, fold)
}

// load reads, once, the files every path's answer needs: the global and
// system files, info/attributes and the root's .gitattributes, and
// gathers the macros they define.
func (a *Attributes) load() {
	if a.loaded {
		return
	}
	a.loaded = true
	set := a.settings()
	a.fold = set.ignoreCase
	sys := readAttrFile("/etc/gitattributes", "", true, false, a.fold)
	if os.Getenv("GIT_ATTR_NOSYSTEM") != "" {
		sys = nil
	}
	global := readAttrFile(attributesFile(set.attributesFile, a.root), "", true, false, a.fold)
	a.global = append(sys, global...) // read from the end: global over system
	a.info = readAttrFile(filepath.Join(a.commonDir, "info", "attributes"), "", true, false, a.fold)
	a.gatherMacros()
}

// gatherMacros collects the macros the files every path's answer needs
// define, a later definition over an earlier one: the system's, the
// global file's (a.global holds both, in that order), the root's
// .gitattributes, info/attributes. Callers hold a.mu.
func (a *Attributes) gatherMacros() {
	a.macros = map[string][]attrState{}
	for _, lines := range [][]attrLine{a.global, a.dir(""), a.info} {
		for _, l := range lines {
			if l.macro != "" {
				a.macros[l.macro] = l.states
			}
		}
	}
}

// atBlobs returns these rules with the .gitattributes files blobs names,
// by folder (an earlier HEAD's, read through store), in place of the work
// tree's, and this machine's files as a read them: read once, however many
// rule sets are asked about (FilteredBefore).
func (a *Attributes) atBlobs(store *Store, blobs map[string]plumbing.Hash) *Attributes {
	a.mu.Lock()
	a.load()
	b := &Attributes{root: a.root, gitDir: a.gitDir, commonDir: a.commonDir, settings: a.settings,
		loaded: true, fold: a.fold, info: a.info, global: a.global,
		dirs: map[string][]attrLine{}, store: store, blobs: blobs}
	a.mu.Unlock()
	b.mu.Lock()
	b.gatherMacros()
	b.mu.Unlock()
	return b
}

// dir returns the lines of the .gitattributes in the repo-relative folder
// rel, reading it on first need.
func (a *Attributes) dir(rel string) []attrLine {
	if lines, ok := a.dirs[rel]; ok {
		return lines
	}
	base := rel
	if a.fold {
		base = asciiLower(base)
	}
	var lines []attrLine
	if a.store != nil {
		data, ok, unreadable, huge := a.store.keptRuleFile(a.blobs[rel])
		switch {
		case unreadable:
			// what it says is not known (a partial clone's object git
			// could not fetch): every file below it counts as filtered
			lines = parseAttrText("* filter=(a-.gitattributes-that-could-not-be-read)", base, false, a.fold)
		case huge:
			// not read again for every command (keptRuleMax): every file
			// below it counts as filtered, the safe side
			lines = parseAttrText("* filter=(a-.gitattributes-over-1-MB,-not-read-again)", base, false, a.fold)
		case ok:
			lines = parseAttrText(data, base, rel == "", a.fold)
		}
	} else {
		lines = readAttrFile(filepath.Join(a.root, filepath.FromSlash(rel), ".gitattributes"), base, rel == "", true, a.fold)
	}
	a.dirs[rel] = lines
	return lines
}

// readAttrFile parses one attributes file; a missing or unreadable one, one
// over git's size bound, and (inTree) one that is a symbolic link, are
// empty. macroOK is whether it may define macros; under fold, patterns are
// lowercased.
func readAttrFile(name, base string, macroOK, inTree, fold bool) []attrLine {
	if name == "" {
		return nil
	}
	if inTree {
		if fi, err := os.Lstat(name); err != nil || !fi.Mode().IsRegular() {
			return nil
		}
	}
	return parseAttrText(readRuleFile(name), base, macroOK, fold)
}

// parseAttrText parses the text of one attributes file (readAttrFile).
func parseAttrText(text, base string, macroOK, fold bool) []attrLine {
	var lines []attrLine
	for rest := text; rest != ""; {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		if i := strings.IndexByte(line, 0); i >= 0 {
			line = line[:i] // git reads a line up to its NUL (attack20-final A2)
		}
		if l, ok := parseAttrLine(line, macroOK); ok {
			l.base = base
			if fold {
				l.pattern = asciiLower(l.pattern)
			}
			lines = append(lines, l)
		}
	}
	return lines
}

const attrBlank = " \t\r\n"

// parseAttrLine parses one line as git's attr.c parse_attr_line does, but
// for a pattern line's states (attrLine.parse); ok is false for a blank
// line, a comment, and a line git refuses.
func parseAttrLine(line string, macroOK bool) (attrLine, bool) {
	line = strings.TrimSuffix(line, "\r")
	if len(line) >= attrMaxLine {
		return attrLine{}, false
	}
	line = strings.TrimLeft(line, attrBlank)
	if line == "" || line[0] == '#' {
		return attrLine{}, false
	}
	var l attrLine
	var pattern string
	if p, rest, ok := cquote.Unquote(line); ok {
		pattern, l.raw = p, rest
	} else {
		n := strings.IndexAny(line, attrBlank)
		if n < 0 {
			n = len(line)
		}
		pattern, l.raw = line[:n], line[n:]
	}
	if macro, ok := strings.CutPrefix(pattern, "[attr]"); ok && macro != "" {
		if !macroOK || !attrNameValid(macro) || !l.parse() {
			return attrLine{}, false
		}
		l.macro = macro
		return l, true
	}
	if strings.HasPrefix(pattern, "!") { // negative patterns are not allowed
		return attrLine{}, false
	}
	if strings.HasSuffix(pattern, "/") { // names a folder, never a file
		return attrLine{}, false
	}
	l.noDir = !strings.Contains(pattern, "/")
	l.pattern = strings.TrimPrefix(pattern, "/")
	l.prefix = literalStart(l.pattern)
	return l, true
}

// parseAttrStates parses the states of a line ("filter=crypt -text
// !diff"); bad is true when git refuses the line: an invalid attribute
// name, or one starting "builtin_".
func parseAttrStates(raw string) (states []attrState, bad bool) {
	for _, field := range strings.FieldsFunc(raw, func(r rune) bool { return r == ' ' || r == '\t' || r == '\r' || r == '\n' }) {
		st := attrState{kind: '+'}
		name, value, hasValue := strings.Cut(field, "=")
		switch {
		case name != "" && (name[0] == '-' || name[0] == '!'):
			st.kind, name = name[0], name[1:]
		case hasValue:
			st.kind, st.value = '=', value
		}
		if !attrNameValid(name) || strings.HasPrefix(name, "builtin_") {
			return nil, true
		}
		st.name = name
		states = append(states, st)
	}
	return states, false
}

// attrNameValid is git's attr_name_valid: letters, digits, "-", ".", "_",
// not starting with "-".
func attrNameValid(name string) bool {
	if name == "" || name[0] == '-' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_') {
			return false
		}
	}
	return true
}

// attributesFile is the attributes file core.attributesFile (found, as read
// by readIgnoreSettings) names, relative to the work tree as git reads it;
// when unset, $XDG_CONFIG_HOME/git/attributes (~/.config/git/attributes).
func attributesFile(found, root string) string {
	if found != "" {
		return excludesFile(found, root)
	}
	return xdgGitFile("attributes")
}
