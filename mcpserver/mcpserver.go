// Package mcpserver is `strata mcp`: a read-only Model Context Protocol
// server over stdio that gives an agent strata's history of its own state —
// log, show, diff, blame, at, resume, decisions, validate. It is the only
// importer of github.com/modelcontextprotocol/go-sdk. Every tool is marked
// read-only and writes nothing: resume does not expire, validate does not
// record. A tool's failure (a path outside the kept files, a time that does
// not parse, nothing recorded then) is an MCP tool error; the server goes on
// serving.
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/layers"
	"github.com/strata-dev/strata/semantic"
	"github.com/strata-dev/strata/state"
)

// Options configure a server.
type Options struct {
	Dir     string           // the repository (any directory inside it)
	Now     func() time.Time // strata's clock
	Version string
	Log     *slog.Logger // where the server's own logs go (stderr); nil: discarded
}

// Serve answers MCP requests read as JSON lines from in, writing only MCP
// messages to out, until in ends or ctx is cancelled. A line that is not a
// JSON-RPC message the server can take is answered with a JSON-RPC error
// (Parse error, Invalid Request) and the server goes on serving.
func Serve(ctx context.Context, in io.Reader, out io.Writer, o Options) error {
	d := newDrain(in, out, mcp.DefaultMaxLineLength)
	// The drain bounds lines itself and answers a longer one; the SDK's
	// own bound would end the session.
	t := &mcp.IOTransport{Reader: d, Writer: nopCloser{d}, MaxLineLength: -1}
	err := New(o).Run(ctx, t)
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// New returns the server with its tools.
func New(o Options) *mcp.Server {
	if o.Now == nil {
		o.Now = state.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "strata", Version: o.Version}, &mcp.ServerOptions{
		Logger: slog.New(&minLevel{o.Log.Handler(), slog.LevelWarn}),
		Instructions: "strata keeps every valid version of this repository's agent state files " +
			"(.claude/*.json, PhaseOutputs, PhaseOutcomes, MEMORY.md, the memory graph). " +
			"These tools read that history; none of them writes.",
	})
	h := &handlers{o: o}
	slots := make(chan struct{}, toolSlots)
	add(s, slots, "strata_log", "List recorded changes of the kept state files, newest first (optionally of one path, in a time range).", h.log)
	add(s, slots, "strata_show", "The bytes of a kept file exactly as recorded: the last version, the one at a time, or in a revision.", h.show)
	add(s, slots, "strata_diff", "How a kept file changed between two moments (a time or a revision each; to defaults to the file on disk): a unified diff, or key-level changes with keys=true.", h.diff)
	add(s, slots, "strata_blame", "For each key of a JSON/YAML file (or under a JSON Pointer), each MEMORY.md line or each graph observation: the commit, time and source that gave it its value; restored values name their first writer.", h.blame)
	add(s, slots, "strata_at", "The agent's whole context as recorded at a past moment: workflow, tier, decisions, sessions, L1 files, the part of MEMORY.md Claude Code loads and what it cuts, the L3 entities.", h.at)
	add(s, slots, "strata_resume", "Where the work stands now: active workflow, phase, tier, blocking decisions, last completed tier of each phase-output session, what to do next. Read-only: nothing is expired.", h.resume)
	add(s, slots, "strata_decisions", "Pending decisions of the Phase Outcomes, with their options and recommendation (optionally of one feature).", h.decisions)
	add(s, slots, "strata_validate", "Check kept files (all, or the given paths) against their schemas and rules; records nothing.", h.validate)
	return s
}

// toolSlots is how many tool calls a server runs at once; the others wait
// for a slot (or for their request to be cancelled). The SDK runs each
// request in its own goroutine, and one call can hold a few hundred times
// the size of a big file (a diff of two 10 MB versions): four at once ran
// the server out of memory.
const toolSlots = 2

// toolEntered, set by tests only, is called when a tool call has its slot.
var toolEntered func(name string)

// add registers a read-only tool whose handler returns its structured
// result and its text, run in one of slots.
func add[In any](s *mcp.Server, slots chan struct{}, name, desc string, h func(ctx context.Context, in In) (any, string, error)) {
	tool := &mcp.Tool{Name: name, Description: desc, Annotations: &mcp.ToolAnnotations{
		ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false), Title: name,
	}}
	mcp.AddTool(s, tool, func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		if toolEntered != nil {
			toolEntered(name)
		}
		data, text, err := h(ctx, in)
		if err != nil {
			return nil, nil, toolError(err)
		}
		return &mcp.CallToolResult{StructuredContent: data, Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
	})
}

// toolError words an error as the CLI's one line, at most maxErrorText
// bytes (clipMiddle).
func toolError(err error) error {
	var ps state.Problems
	if errors.As(err, &ps) {
		return errors.New(clipMiddle(ps.Error()))
	}
	msg := err.Error()
	if errors.Is(err, state.ErrNotFound) { // as the CLI: the sentinel is not repeated
		msg = strings.TrimSuffix(msg, ": "+state.ErrNotFound.Error())
	}
	if len(msg) > maxErrorText {
		return errors.New(clipMiddle(msg))
	}
	if msg != err.Error() {
		return errors.New(msg)
	}
	return err
}

// maxErrorText bounds a tool error's text: an error quotes the argument
// it is about (`"aaaa…": not a kept file`), and an agent would otherwise
// get back, and pay for, a 16 MB path it sent.
const maxErrorText = 1024

// clipMiddle keeps the start and the end of a longer message (the value
// quoted and what is wrong with it) and says how much it left out between:
// `"aaa… [16776210 bytes cut] …aaa": not a kept file`. It cuts between
// whole UTF-8 characters.
func clipMiddle(msg string) string {
	if len(msg) <= maxErrorText {
		return msg
	}
	head, tail := maxErrorText*2/3, maxErrorText/3
	for head > 0 && !utf8.RuneStart(msg[head]) {
		head--
	}
	start := len(msg) - tail
	for start < len(msg) && !utf8.RuneStart(msg[start]) {
		start++
	}
	return fmt.Sprintf("%s… [%d bytes cut] …%s", msg[:head], start-head, msg[start:])
}

type handlers struct{ o Options }

func (h *handlers) open() (*engine.Engine, error) {
	eng, err := engine.Open(h.o.Dir)
	if err != nil {
		return nil, err
	}
	eng.Now = h.o.Now
	return eng, nil
}

// kept resolves a repository-relative path to a kept file; anything else
// is an error.
func kept(eng *engine.Engine, p string) (config.Kept, error) {
	if p == "" {
		return config.Kept{}, errors.New("path: required")
	}
	return eng.Resolve(eng.Root(), p)
}

// openKept opens the repository and resolves path to one of its kept files.
func (h *handlers) openKept(path string) (*engine.Engine, config.Kept, error) {
	eng, err := h.open()
	if err != nil {
		return nil, config.Kept{}, err
	}
	k, err := kept(eng, path)
	return eng, k, err
}

// point reads a time or a revision.
func (h *handlers) point(at, rev string) (engine.Point, error) {
	switch {
	case at != "" && rev != "":
		return engine.Point{}, errors.New("at and rev cannot be used together")
	case at != "":
		t, err := state.ParseTime(at, h.o.Now())
		if err != nil {
			return engine.Point{}, fmt.Errorf("at: %v", err)
		}
		return engine.Point{At: t}, nil
	}
	return engine.Point{Rev: rev}, nil
}

// pointOf reads a time when it parses as one, else a revision (diff's from
// and to, as on the command line).
func (h *handlers) pointOf(s string) engine.Point {
	if t, err := state.ParseTime(s, h.o.Now()); err == nil {
		return engine.Point{At: t}
	}
	return engine.Point{Rev: s}
}

type logIn struct {
	Path  string `json:"path,omitempty" jsonschema:"only changes of this kept file (repository-relative)"`
	Since string `json:"since,omitempty" jsonschema:"only changes at or after this time (RFC 3339 or '2h ago')"`
	Until string `json:"until,omitempty" jsonschema:"only changes at or before this time"`
	Limit count  `json:"limit,omitempty" jsonschema:"at most this many entries (default 50)"`
}

// count is a whole-number argument (strata_log's limit, the only one): its
// schema is an integer's, and a value the SDK's schema check lets through
// that an int does not hold (past 64 bits, 1e20, 1.0) is read here, where
// it gets the CLI's one line rather than the decoder's, which named
// mcpserver.logIn (attack24 G4). The SDK hands the arguments on through
// float64, which holds every integer up to 2^53 exactly and rounds those
// past it: as for ids (maxID), a larger one is refused rather than read as
// another. A negative one is the handler's to refuse.
type count int

// maxCount is the largest count: 2^53, the last integer float64 holds
// before the one after it would round back.
const maxCount = 1 << 53

func (n *count) UnmarshalJSON(b []byte) error {
	s := string(b)
	if v, err := strconv.ParseInt(s, 10, 0); err == nil && v <= maxCount {
		*n = count(v)
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange):
		return errors.New("limit: must be a whole number")
	case f != math.Trunc(f):
		return errors.New("limit: must be a whole number")
	case f < 0:
		*n = -1 // refused as negative, however far
	case f > maxCount:
		return errors.New("limit: too large (at most 9007199254740992)")
	default:
		*n = count(f)
	}
	return nil
}

func (h *handlers) log(_ context.Context, in logIn) (any, string, error) {
	if in.Limit < 0 {
		return nil, "", errors.New("limit: must not be negative")
	}
	q := state.LogQuery{Limit: int(in.Limit)}
	if q.Limit == 0 {
		q.Limit = 50
	}
	var err error
	if in.Since != "" {
		if q.Since, err = state.ParseTime(in.Since, h.o.Now()); err != nil {
			return nil, "", fmt.Errorf("since: %v", err)
		}
	}
	if in.Until != "" {
		if q.Until, err = state.ParseTime(in.Until, h.o.Now()); err != nil {
			return nil, "", fmt.Errorf("until: %v", err)
		}
	}
	eng, err := h.open()
	if err != nil {
		return nil, "", err
	}
	if in.Path != "" {
		k, err := kept(eng, in.Path)
		if err != nil {
			return nil, "", err
		}
		q.Path = k.Path
	}
	ents, err := eng.Log(q)
	if err != nil && !errors.Is(err, state.ErrNotFound) {
		return nil, "", err
	}
	if ents == nil {
		ents = []state.Entry{}
	}
	text := ""
	for _, en := range ents {
		text += fmt.Sprintf("%s %s %-6s %s (%s)\n", state.ShortID(en.Commit), en.Time.Format(time.RFC3339), state.TermSafe(string(en.Action)), state.ShownPath(en.Path), state.TermSafe(string(en.Source)))
	}
	if text == "" {
		text = "nothing recorded\n"
	}
	return map[string]any{"entries": ents}, text, nil
}

type showIn struct {
	Path string `json:"path" jsonschema:"the kept file (repository-relative)"`
	At   string `json:"at,omitempty" jsonschema:"the version recorded at this time (RFC 3339 or '2h ago')"`
	Rev  string `json:"rev,omitempty" jsonschema:"the version in this commit-ish (of refs/strata/state or your branches)"`
}

func (h *handlers) show(_ context.Context, in showIn) (any, string, error) {
	p, err := h.point(in.At, in.Rev)
	if err != nil {
		return nil, "", err
	}
	eng, k, err := h.openKept(in.Path)
	if err != nil {
		return nil, "", err
	}
	c, err := eng.Commit(p)
	if err != nil {
		return nil, "", err
	}
	data, err := eng.Show(k.Path, engine.Point{Rev: c})
	if err != nil {
		return nil, "", err
	}
	return map[string]any{"path": k.Path, "commit": c, "content": string(data)}, string(data), nil
}

type diffIn struct {
	Path string `json:"path" jsonschema:"the kept file (repository-relative)"`
	From string `json:"from,omitempty" jsonschema:"old side: a time or a commit-ish (default: the last recorded version)"`
	To   string `json:"to,omitempty" jsonschema:"new side: a time or a commit-ish (default: the file on disk)"`
	Keys bool   `json:"keys,omitempty" jsonschema:"key-level changes (JSON Pointers, graph entities, MEMORY.md sections) instead of a unified diff"`
}

func (h *handlers) diff(_ context.Context, in diffIn) (any, string, error) {
	eng, k, err := h.openKept(in.Path)
	if err != nil {
		return nil, "", err
	}
	var to *engine.Point
	if in.To != "" {
		p := h.pointOf(in.To)
		to = &p
	}
	if in.Keys {
		ch, err := eng.KeyDiff(k, h.pointOf(in.From), to)
		if err != nil {
			return nil, "", err
		}
		if ch == nil {
			ch = []semantic.Change{}
		}
		return map[string]any{"path": k.Path, "changes": ch}, state.TermText(semantic.Text(ch)), nil
	}
	d, err := eng.Diff(k, h.pointOf(in.From), to)
	if err != nil {
		return nil, "", err
	}
	return map[string]any{"path": k.Path, "from": d.From, "to": d.To, "changed": d.Text != "", "diff": d.Text}, state.TermDiff(d.Text), nil
}

type blameIn struct {
	Path    string `json:"path" jsonschema:"the kept file (repository-relative)"`
	Pointer string `json:"pointer,omitempty" jsonschema:"a JSON Pointer: only keys at or under it (JSON and YAML files)"`
}

func (h *handlers) blame(_ context.Context, in blameIn) (any, string, error) {
	eng, k, err := h.openKept(in.Path)
	if err != nil {
		return nil, "", err
	}
	lines, err := eng.Blame(k, in.Pointer)
	if err != nil {
		return nil, "", err
	}
	text := ""
	for _, l := range lines {
		what, value := l.Key, state.TermSafe(l.Value)
		if what == "" {
			what = fmt.Sprintf("line %d", l.Line)
		} else {
			// compact JSON: quoted once, as the CLI's blame (attack24 G5)
			value = state.TermSafe(string(state.JSONSafe([]byte(l.Value))))
		}
		restored := ""
		if l.Restored {
			restored = " restored by " + state.ShortID(l.RestoredBy)
		}
		text += fmt.Sprintf("%s %s %s%s %s: %s\n", state.ShortID(l.Commit), l.Time.Format(time.RFC3339), state.TermSafe(string(l.Source)), restored, state.TermSafe(what), value)
	}
	if lines == nil {
		lines = []semantic.BlameLine{}
	}
	return map[string]any{"path": k.Path, "lines": lines}, text, nil
}

type atIn struct {
	At  string `json:"at,omitempty" jsonschema:"the moment: RFC 3339, '2h ago', 'now' (default now)"`
	Rev string `json:"rev,omitempty" jsonschema:"a commit-ish of the state ref instead of a time"`
}

func (h *handlers) at(_ context.Context, in atIn) (any, string, error) {
	if in.At == "" && in.Rev == "" {
		in.At = "now"
	}
	p, err := h.point(in.At, in.Rev)
	if err != nil {
		return nil, "", err
	}
	eng, err := h.open()
	if err != nil {
		return nil, "", err
	}
	c, err := layers.New(eng, nil).At(p)
	if err != nil {
		return nil, "", err
	}
	return c, state.TermText(c.Text()), nil
}

type noIn struct{}

func (h *handlers) resume(_ context.Context, _ noIn) (any, string, error) {
	eng, err := h.open()
	if err != nil {
		return nil, "", err
	}
	r := layers.New(eng, nil).Peek()
	return r, state.TermText(r.Text()), nil
}

type decisionsIn struct {
	Feature string `json:"feature,omitempty" jsonschema:"only this feature's decisions"`
}

func (h *handlers) decisions(_ context.Context, in decisionsIn) (any, string, error) {
	eng, err := h.open()
	if err != nil {
		return nil, "", err
	}
	all := layers.New(eng, nil).Pending()
	out := []layers.Decision{}
	text := ""
	for _, d := range all {
		if in.Feature != "" && d.Feature != in.Feature {
			continue
		}
		out = append(out, d)
		block := ""
		if d.Blocking {
			block = " (blocking)"
		}
		options := make([]string, len(d.Options))
		for i, o := range d.Options {
			options[i] = state.TermSafe(o)
		}
		text += fmt.Sprintf("%s %s%s: %s options %v, recommended %s\n", state.TermSafe(d.Feature), state.TermSafe(d.ID), block, state.TermSafe(d.Question), options, state.TermSafe(d.Recommended))
	}
	if text == "" {
		text = "no pending decisions\n"
	}
	return map[string]any{"decisions": out}, text, nil
}

type validateIn struct {
	Paths []string `json:"paths,omitempty" jsonschema:"kept files to check (default: every kept file)"`
}

type fileResult struct {
	Path     string         `json:"path"`
	Class    state.Class    `json:"class"`
	Valid    bool           `json:"valid"`
	Problems state.Problems `json:"problems"`
}

func (h *handlers) validate(_ context.Context, in validateIn) (any, string, error) {
	eng, err := h.open()
	if err != nil {
		return nil, "", err
	}
	// a file a rule would keep but for a control character in its name is
	// invalid, as the command line's validate says (attack34b F4: "0 files
	// checked, 0 invalid" here while validate exited 1)
	var paths []config.Kept
	var badNames state.Problems
	if len(in.Paths) == 0 {
		if paths, err = eng.AllPaths(); err != nil {
			return nil, "", err
		}
		if badNames, err = eng.BadNames(); err != nil {
			return nil, "", err
		}
	}
	for _, p := range in.Paths {
		k, err := kept(eng, p)
		if bp, bad := engine.BadNameOf(err); bad {
			badNames = append(badNames, bp)
			continue
		}
		if err != nil {
			return nil, "", err
		}
		paths = append(paths, k)
	}
	res, err := eng.Validate(paths, len(in.Paths) > 0)
	if err != nil {
		return nil, "", err
	}
	for _, p := range badNames {
		res = append(res, engine.Result{Kept: config.Kept{Path: p.Path}, Problems: state.Problems{p}})
	}
	out := []fileResult{}
	text, bad := "", 0
	for _, r := range res {
		ps := r.Problems
		if ps == nil {
			ps = state.Problems{}
		}
		out = append(out, fileResult{Path: r.Path, Class: r.Class, Valid: !ps.Invalid(), Problems: ps})
		if ps.Invalid() {
			bad++
		}
		if len(ps) > 0 {
			text += ps.Error() + "\n"
		}
	}
	files := "files"
	if len(out) == 1 {
		files = "file"
	}
	text += fmt.Sprintf("%d %s checked, %d invalid\n", len(out), files, bad)
	return map[string]any{"files": out, "invalid": bad}, text, nil
}

// minLevel drops the SDK's records below a level (its session chatter).
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h *minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}
