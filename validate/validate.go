// Package validate checks the bytes of kept files against strata's built-in
// schemas, a user's own JSON Schema, or a format only (JSON, YAML, JSONL,
// Markdown), and reports each finding as a state.Problem that names the file,
// the line and column of the offending value, its JSON Pointer and what was
// expected. It runs the rules of docs/contract.md §3 that a schema cannot express
// (package phase holds them) and turns hostile input (docs/contract.md §13) into one clear problem instead of a crash.
// It is the only package that imports the JSON Schema validator and the YAML
// decoder.
package validate

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/strata-dev/strata/schemas"
	"github.com/strata-dev/strata/state"
)

// DefaultMaxSize is the largest file validated when Options.MaxSize is 0.
const DefaultMaxSize = 10 << 20

// Format-only schema names accepted by Validate besides the built-in schemas
// and custom schema files.
const (
	SchemaJSON      = "json"       // well-formed JSON
	SchemaYAML      = "yaml"       // well-formed YAML
	SchemaJSONL     = "jsonl"      // JSON Lines: every non-empty line a JSON value
	SchemaJSONLMCP  = "jsonl-mcp"  // JSONL, every line an MCP memory entity or relation
	SchemaMCPMemory = "mcp-memory" // alias of SchemaJSONLMCP
	SchemaMarkdown  = "markdown"   // UTF-8 text; warnings past what Claude Code loads
	schemaMCPLine   = "mcp-memory-line"
	memoryMaxLines  = 200
	memoryMaxBytes  = 25 << 10
)

// Options configure a Validator.
type Options struct {
	Root    string // repo root; custom schema names are repo-relative paths resolved under it
	MaxSize int64  // 0 = DefaultMaxSize; larger input gives one problem and is not decoded
	// GitDirs are the repository's git directories (its own and the common
	// one): no schema file is read whose real path is inside one, wherever
	// they are. A .git element of a path is refused without them.
	GitDirs []string
	// Files, when set, is where the user's schema files (and the files
	// they $ref) are read instead of the work tree under Root: the git
	// index, for the pre-commit hook. A file it does not hold (an error
	// wrapping fs.ErrNotExist) is read from the work tree when WorkTreeToo
	// is set; otherwise that error is the schema's problem.
	Files       state.Files
	WorkTreeToo bool
}

// Validator validates files. It compiles each schema once, on first use, and
// keeps it for its lifetime, so an edited custom schema file is seen by a new
// Validator only. It is safe for concurrent use.
type Validator struct {
	root    string
	maxSize int64
	gitDirs []string
	files   state.Files
	wtToo   bool // files falls back to the work tree

	// mu guards compiler and cache: jsonschema.Compiler is not safe for
	// concurrent use, and compiled schemas are shared by all callers.
	mu       sync.Mutex
	compiler *jsonschema.Compiler // holds the built-in schemas
	cache    map[string]*compiled // by schema name as given to Validate
}

// compiled is a schema ready to validate with, or the problem that made it
// unusable (a custom schema file that cannot be read or is not a schema).
type compiled struct {
	schema *jsonschema.Schema
	broken string
	base   string // a user schema's URL prefix, file://ROOT/ (check)
}

// New returns a Validator. The built-in schemas are parsed when first needed
// (builtinLoader); a built-in schema that does not load is a bug in the
// binary, reported when it is compiled. New itself does not fail.
func New(opts Options) (*Validator, error) {
	v := &Validator{
		root:    opts.Root,
		maxSize: opts.MaxSize,
		gitDirs: opts.GitDirs,
		files:   opts.Files,
		wtToo:   opts.WorkTreeToo,
		cache:   make(map[string]*compiled),
	}
	if v.root == "" {
		v.root = "."
	}
	if v.maxSize <= 0 {
		v.maxSize = DefaultMaxSize
	}
	c := newCompiler()
	c.UseLoader(builtinLoader{}) // each built-in schema parsed when first needed
	// The embedded schemas are checked against their metaschema by
	// TestBuiltinSchemasMatchMetaschema; at run time that check would
	// compile the drafts' metaschemas, ~3 ms of every hook.
	c.TrustSchemas()
	v.compiler = c
	return v, nil
}

// newCompiler returns a compiler for draft 2020-12 that asserts "format",
// so a malformed date-time is an error and not an annotation.
func newCompiler() *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	return c
}

// Validate checks one file's bytes and returns its problems, nil when valid.
// path is used in messages and for the phase-output file-name rule only.
//
// schema is one of:
//   - a built-in name (schemas.Names()); phase-outcome and decision-resolution
//     files are YAML, the others JSON;
//   - "json" or "yaml": well-formed only;
//   - "jsonl": JSON Lines, every non-empty line a well-formed JSON value;
//   - "jsonl-mcp" or "mcp-memory": JSONL, every non-empty line an MCP memory
//     entity or relation, problems carrying that line's number; an empty file
//     is a valid empty graph;
//   - "markdown": valid UTF-8, with warnings past 200 lines or 25 KB (what
//     Claude Code loads of MEMORY.md); an empty file is valid;
//   - a repo-relative path ending in .json: the user's own JSON Schema file
//     under Options.Root; if it cannot be used, one problem names it.
//
// Input larger than MaxSize gives one problem and is not decoded.
func (v *Validator) Validate(path string, data []byte, schema string) state.Problems {
	return v.ValidateAs(path, data, schema, "")
}

// MaxProblems is the most problems Validate names for one file; past it,
// one more problem says how many were left out.
const MaxProblems = 100

// ValidateAs is Validate with the file's format given (FormatJSON,
// FormatYAML, FormatJSONL); "" means the format its name says (FormatOf).
// It names at most MaxProblems problems, the first by position, and then
// one saying how many more the file has (a 5.5 MB handoff with 130 000
// bad findings printed 390 000 lines in the pre-commit hook: attack26
// recheck F4).
func (v *Validator) ValidateAs(path string, data []byte, schema, format string) state.Problems {
	return capProblems(path, v.validateAs(path, data, schema, format))
}

// capProblems keeps the first MaxProblems of ps (already in order) and adds
// one problem counting the rest.
func capProblems(path string, ps state.Problems) state.Problems {
	if len(ps) <= MaxProblems {
		return ps
	}
	more := len(ps) - MaxProblems
	ps = ps[:MaxProblems:MaxProblems]
	return append(ps, state.Problem{Path: path, Message: fmt.Sprintf("… and %d more problems in this file (the first %d are listed)", more, MaxProblems)})
}

func (v *Validator) validateAs(path string, data []byte, schema, format string) state.Problems {
	if int64(len(data)) > v.maxSize {
		return tooLarge(path, len(data), v.maxSize)
	}
	if format == "" {
		format = FormatOf(path)
	}
	switch schema {
	case SchemaJSON, SchemaYAML:
		if format == "" {
			format = schema
		}
		switch format {
		case FormatYAML:
			_, _, ps := decodeYAML(path, data)
			return ps
		case FormatJSONL:
			return v.validateLines(path, data, nil)
		}
		// syntax only: nothing is built
		_, _, ps := decodeJSONFor(path, data, skipAll)
		return ps
	case SchemaJSONLMCP, SchemaMCPMemory:
		return v.validateJSONL(path, data)
	case SchemaJSONL:
		return v.validateLines(path, data, nil)
	case SchemaMarkdown:
		return checkMarkdown(path, data)
	}
	var sch *compiled
	switch {
	case slices.Contains(schemas.Names(), schema):
		sch = v.builtin(schema)
	case SchemaFile(schema):
		sch = v.custom(schema)
	default:
		return state.Problems{{Path: path, Message: "unknown schema " + strconv.Quote(schema)}}
	}

	if format == "" && isYAML(schema) || format == FormatYAML {
		format = FormatYAML
	}
	if format == FormatJSONL {
		if sch.broken != "" {
			return state.Problems{{Path: path, Message: sch.broken}}
		}
		return v.validateLines(path, data, sch)
	}
	decode := decodeJSON
	if format == FormatYAML {
		decode = decodeYAML
	}
	doc, loc, ps := decode(path, data)
	if ps != nil {
		return ps
	}
	if sch.broken != "" {
		return state.Problems{{Path: path, Message: sch.broken}}
	}
	ps = check(path, doc, loc, sch.schema, sch.base, len(data))
	ps = append(ps, rules(schema, path, doc, loc)...)
	sortProblems(ps)
	return ps
}

// SchemaFile reports whether Validate takes a schema name as the path of the
// user's own schema file: a name ending in .json that is neither a built-in
// schema nor a format-only one.
func SchemaFile(name string) bool {
	switch name {
	case SchemaJSON, SchemaYAML, SchemaJSONL, SchemaJSONLMCP, SchemaMCPMemory, SchemaMarkdown:
		return false
	}
	return strings.HasSuffix(name, ".json") && !slices.Contains(schemas.Names(), name)
}

// isYAML reports whether files of the named built-in schema are YAML.
func isYAML(schema string) bool {
	return schema == string(state.ClassPhaseOutcome) || schema == string(state.ClassDecisionResolution)
}

// builtin returns the compiled built-in schema name.
func (v *Validator) builtin(name string) *compiled {
	v.mu.Lock()
	defer v.mu.Unlock()
	if c, ok := v.cache[name]; ok {
		return c
	}
	sch, err := v.compiler.Compile(schemas.ID(name))
	if err != nil {
		// The embedded schemas are tested; this is a bug in the binary.
		panic(fmt.Sprintf("compile built-in schema %s: %v", name, err))
	}
	c := &compiled{schema: sch}
	v.cache[name] = c
	return c
}

func tooLarge(path string, n int, limit int64) state.Problems {
	return state.Problems{{Path: path, Message: fmt.Sprintf("file is %d bytes, larger than max_size %d", n, limit)}}
}

// checkBytes reports what makes data unreadable as text before any decoding:
// a NUL byte (binary), UTF-16, invalid UTF-8. It returns data without a
// leading UTF-8 byte order mark, which editors on Windows add and do not show.
func checkBytes(path string, data []byte) ([]byte, state.Problems) {
	if bytes.HasPrefix(data, []byte{0xFF, 0xFE}) || bytes.HasPrefix(data, []byte{0xFE, 0xFF}) {
		return nil, state.Problems{{Path: path, Line: 1, Col: 1, Message: "file is UTF-16 encoded, want UTF-8"}}
	}
	data = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return nil, state.Problems{problemAt(path, data, i, "file is binary (NUL byte)")}
	}
	if !utf8.Valid(data) {
		return nil, state.Problems{problemAt(path, data, firstInvalidUTF8(data), notUTF8)}
	}
	return data, nil
}

// checkJSONBytes is checkBytes for JSON text (sep 0: one document; '\n':
// one a line): invalid UTF-8 inside a value is reported at that value's
// JSON pointer (/a/b for a string there), not at the document's, as a
// syntax error would be.
func checkJSONBytes(path string, data []byte, sep byte) ([]byte, state.Problems) {
	text, ps := checkBytes(path, data)
	if len(ps) != 1 || ps[0].Message != notUTF8 {
		return text, ps
	}
	text = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
	off := firstInvalidUTF8(text)
	doc := text
	if sep != 0 {
		start := bytes.LastIndexByte(text[:off], sep) + 1
		end := bytes.IndexByte(text[off:], sep)
		if end < 0 {
			end = len(text) - off
		}
		doc, off = text[start:off+end], off-start
	}
	ps[0].Pointer = pointerAtByte(doc, off)
	return nil, ps
}

// pointerAtByte is the JSON pointer of the value being read at byte off of
// data when the parser stops there: the string holding an invalid UTF-8
// byte, or the object whose key holds it. The byte is replaced, in a copy,
// by a control character, which JSON refuses wherever it is. "" when the
// parser stops elsewhere (a syntax error before it).
func pointerAtByte(data []byte, off int) string {
	c := bytes.Clone(data)
	c[off] = 0x01
	p := newJSONParser(c, true)
	p.index.stack = true // as syntaxProblem: no value built, a node a level
	p.want = skipAll
	if _, err := p.parse(); err == nil || err.off != off {
		return ""
	}
	return p.index.pointer(p.cur)
}

// notUTF8 is checkBytes's message for a file that is not valid UTF-8.
const notUTF8 = "file is not valid UTF-8"

func firstInvalidUTF8(data []byte) int {
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(data)
}

// problemAt makes a whole-document problem positioned at byte offset off.
func problemAt(path string, data []byte, off int, msg string) state.Problem {
	at := newJSONParser(data, false).posAt(off)
	return state.Problem{Path: path, Line: at.line, Col: at.col, Message: msg}
}

// isBlank reports whether data holds only whitespace.
func isBlank(data []byte) bool {
	return len(bytes.TrimSpace(data)) == 0
}

// locator finds the position of the value at a JSON Pointer or, when it
// has none, of its nearest ancestor that has one; false when none has.
// want, when set, is told the pointers about to be asked for, so a large
// document is scanned once for all of them.
type locator struct {
	find func(ptr string) (pos, bool)
	want func(ptrs []string)
}

// prepare tells loc the pointers about to be asked for.
func (loc *locator) prepare(ptrs []string) {
	if loc != nil && loc.want != nil {
		loc.want(ptrs)
	}
}

// at returns a problem at ptr, positioned at the value there or, failing
// that, at its nearest ancestor that has a known position.
func (loc *locator) at(path, ptr, msg string) state.Problem {
	p := state.Problem{Path: path, Pointer: ptr, Message: msg}
	if loc == nil {
		return p
	}
	if at, ok := loc.find(ptr); ok {
		p.Line, p.Col = at.line, at.col
	}
	return p
}

// DecodeJSON decodes one JSON document into map[string]any, []any, string,
// json.Number, bool and nil. Syntax errors, an empty file, binary or
// non-UTF-8 bytes, duplicate keys, nesting deeper than MaxDepth and input
// larger than DefaultMaxSize are returned as one positioned problem.
func DecodeJSON(path string, data []byte) (any, state.Problems) {
	return DecodeJSONFor(path, data, nil)
}

// DecodeJSONFor is DecodeJSON building only what want names of the
// document (see Want; nil builds all of it): it fails exactly where
// DecodeJSON fails, and what it builds is what DecodeJSON builds there. A blame reading back 10 000
// versions of a file for a few keys builds those keys only.
func DecodeJSONFor(path string, data []byte, want *Want) (any, state.Problems) {
	if len(data) > DefaultMaxSize {
		return nil, tooLarge(path, len(data), DefaultMaxSize)
	}
	if want == nil || want.All {
		want = nil
	}
	v, _, ps := decodeJSONFor(path, data, want)
	return v, ps
}

// decodeJSON decodes data and returns a locator that, on first use, scans
// the text again to index the positions of its values.
func decodeJSON(path string, data []byte) (any, *locator, state.Problems) {
	v, text, ps := decodeJSONFor(path, data, nil)
	if ps != nil {
		return nil, nil, ps
	}
	return v, newJSONLocator(text), nil
}

// decodeJSONFor decodes of data what want asks for (nil: all of it), and
// returns the text it read (data without a byte-order mark).
func decodeJSONFor(path string, data []byte, want *Want) (any, []byte, state.Problems) {
	data, ps := checkJSONBytes(path, data, 0)
	if ps != nil {
		return nil, nil, ps
	}
	p := getParser(data)
	p.want = want
	v, err := p.parse()
	putParser(p)
	if err != nil {
		if isBlank(data) {
			return nil, nil, state.Problems{{Path: path, Message: "file is empty"}}
		}
		return nil, nil, state.Problems{syntaxProblem(path, data)}
	}
	return v, data, nil
}

// syntaxProblem describes the syntax error in data. It parses data again,
// recording positions, to learn the JSON Pointer of the value being read
// when the error happened and, for a duplicate key, the line of the first.
func syntaxProblem(path string, data []byte) state.Problem {
	// building no value and keeping only the nodes of the values open, so
	// the second pass costs a scan, whatever the document's size
	p := newJSONParser(data, true)
	p.index.stack = true
	p.want = skipAll
	p.dupsAtKey = true
	_, err := p.parse()
	if err == nil { // cannot happen: parsing is deterministic
		return state.Problem{Path: path, Message: "invalid JSON"}
	}
	msg := err.msg
	ptr := p.index.pointer(p.cur)
	if err.dup != "" && err.first >= 0 {
		msg += " (first at line " + strconv.Itoa(p.posAt(err.first).line) + ")"
	}
	at := p.posAt(err.off)
	return state.Problem{Path: path, Line: at.line, Col: at.col, Pointer: ptr, Message: msg}
}

// validateJSONL checks every non-empty line of an MCP memory graph file.
// A leading UTF-8 byte order mark, which other files may carry, is a
// problem here: the memory server parses each line as JSON as it reads it
// (Node keeps the mark), so it cannot load such a file at all, and strata,
// which reads the file as the server does, would not take the first line
// for the entity it is.
func (v *Validator) validateJSONL(path string, data []byte) state.Problems {
	if bytes.HasPrefix(data, []byte("\xEF\xBB\xBF")) {
		return state.Problems{{Path: path, Line: 1, Col: 1, Pointer: "/",
			Message: "a byte order mark starts the file: the MCP memory server cannot load it (each line must be JSON); remove the file's first 3 bytes"}}
	}
	return v.validateLines(path, data, v.builtin(schemaMCPLine))
}

// validateLines checks that every non-empty line is a JSON document valid
// against sch (well-formed only when sch is nil).
func (v *Validator) validateLines(path string, data []byte, sch *compiled) state.Problems {
	data, ps := checkJSONBytes(path, data, '\n')
	if ps != nil {
		return ps
	}
	for n, start := 1, 0; start < len(data); n++ {
		end := bytes.IndexByte(data[start:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += start
		}
		line := data[start:end]
		start = end + 1
		if isBlank(line) {
			continue
		}
		doc, loc, lps := decodeJSON(path, line)
		if lps == nil && sch != nil {
			lps = check(path, doc, loc, sch.schema, sch.base, len(line))
			sortProblems(lps)
		}
		for _, p := range lps {
			p.Line = n
			p.Col = max(p.Col, 1)
			ps = append(ps, p)
		}
	}
	return ps
}

// checkMarkdown checks an L2 memory file: readable text, and warnings when
// Claude Code would load only part of it.
func checkMarkdown(path string, data []byte) state.Problems {
	text, ps := checkBytes(path, data)
	if ps != nil {
		return ps
	}
	if p, ok := conflictMarkers(path, text); ok {
		return state.Problems{p}
	}
	lines := bytes.Count(text, []byte("\n"))
	if len(text) > 0 && text[len(text)-1] != '\n' {
		lines++
	}
	if lines > memoryMaxLines {
		ps = append(ps, state.Problem{Path: path, Warning: true,
			Message: fmt.Sprintf("file has %d lines; Claude Code loads only the first %d", lines, memoryMaxLines)})
	}
	if len(data) > memoryMaxBytes {
		ps = append(ps, state.Problem{Path: path, Warning: true,
			Message: fmt.Sprintf("file is %d bytes; Claude Code loads only the first %d (25 KB)", len(data), memoryMaxBytes)})
	}
	return ps
}

// conflictMarkers finds the first region of git conflict markers in a
// Markdown file — a line "<<<<<<<" (or "<<<<<<< " and a label), later a line
// "=======", later a line ">>>>>>>" (or with a label), outside fenced code —
// left by a merge, a rebase or a stash pop that stopped on a conflict. Such
// a file holds both sides and the markers: recorded, it would reach every
// machine through sync, and an edit would land inside the region.
func conflictMarkers(path string, text []byte) (state.Problem, bool) {
	start, mid := 0, false
	var fenceChar byte // the open code fence's character and length, as CommonMark reads fences
	fenceLen := 0
	for n, rest := 1, text; len(rest) > 0; n++ {
		line, after, _ := bytes.Cut(rest, []byte("\n"))
		rest = after
		line = bytes.TrimSuffix(line, []byte("\r"))
		c, run, info, isFence := fenceLine(line)
		switch {
		case fenceLen > 0:
			if isFence && c == fenceChar && run >= fenceLen && len(bytes.Trim(info, " \t")) == 0 {
				fenceLen = 0
			}
		case isFence && !(c == '`' && bytes.IndexByte(info, '`') >= 0):
			fenceChar, fenceLen = c, run
		case marker(line, '<'):
			start, mid = n, false
		case start > 0 && string(line) == "=======":
			mid = true
		case start > 0 && mid && marker(line, '>'):
			return state.Problem{Path: path, Line: start, Col: 1,
				Message: fmt.Sprintf("git conflict markers (<<<<<<< at line %d, >>>>>>> at line %d) from a merge, rebase or stash that stopped on a conflict: resolve it (keep the lines you want, delete the markers)", start, n)}, true
		}
	}
	return state.Problem{}, false
}

// fenceLine reads line as a CommonMark code fence: up to three spaces, then
// a run of three or more backticks or tildes, then the info string.
func fenceLine(line []byte) (c byte, run int, info []byte, ok bool) {
	i := 0
	for i < len(line) && i < 3 && line[i] == ' ' {
		i++
	}
	if i >= len(line) || line[i] != '`' && line[i] != '~' {
		return 0, 0, nil, false
	}
	c = line[i]
	j := i
	for j < len(line) && line[j] == c {
		j++
	}
	if j-i < 3 {
		return 0, 0, nil, false
	}
	return c, j - i, line[j:], true
}

// marker reports whether line is a conflict marker of seven c: alone, or
// followed by a space and a label.
func marker(line []byte, c byte) bool {
	if len(line) < 7 || bytes.Count(line[:7], []byte{c}) != 7 {
		return false
	}
	return len(line) == 7 || line[7] == ' '
}

// sortProblems orders problems by position, then pointer and message, so
// output is stable.
func sortProblems(ps state.Problems) {
	slices.SortStableFunc(ps, func(a, b state.Problem) int {
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		if a.Col != b.Col {
			return a.Col - b.Col
		}
		if c := strings.Compare(a.Pointer, b.Pointer); c != 0 {
			return c
		}
		return strings.Compare(a.Message, b.Message)
	})
}

// Schema names are repo-relative and slash-separated; resolve makes one an
// OS path under the root, refusing names that leave it or enter .git
// (checkSchemaPath).
func (v *Validator) resolve(name string) (string, error) {
	if err := checkSchemaPath(name); err != nil {
		return "", err
	}
	return filepath.Join(v.root, filepath.FromSlash(name)), nil
}
