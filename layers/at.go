package layers

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/markdown"
	"github.com/strata-dev/strata/phase"
	"github.com/strata-dev/strata/state"
)

// What Claude Code loads of MEMORY.md: the first 200 lines or 25 KB,
// whichever comes first.
const (
	WindowLines = 200
	WindowBytes = 25 * 1024
)

// Context is the agent's whole context as one moment of history recorded
// it (`strata at`): the resume report read from that commit instead of the
// disk, plus the L1 files, the part of MEMORY.md Claude Code would have
// loaded and the L3 entities.
type Context struct {
	At     *time.Time `json:"at,omitempty"` // the moment asked for; absent for a revision
	Commit string     `json:"commit"`
	*Report
	L1        []L1File      `json:"l1_files"`
	Memory    *MemoryWindow `json:"memory,omitempty"`
	Entities  []GraphEntity `json:"entities"`
	Relations int           `json:"relations"`
	// NotRead names each version the moment holds over max_size, one line
	// each (`PATH: recorded version is N bytes, larger than max_size M;
	// not read`): never read, so never part of the rest.
	NotRead []string `json:"not_read,omitempty"`
}

// L1File is one L1 file as recorded.
type L1File struct {
	Path     string          `json:"path"`
	Class    state.Class     `json:"class"`
	Content  json.RawMessage `json:"content,omitempty"`   // absent when it is not JSON or not read
	TooLarge bool            `json:"too_large,omitempty"` // over max_size: not read (see Context.NotRead)
	// Session and ToolUse: the Claude Code session and tool call that wrote
	// this version, when its hook saw it (provenance).
	Session string `json:"session,omitempty"`
	ToolUse string `json:"tool_use,omitempty"`
}

// MemoryWindow is MEMORY.md against what Claude Code loads of it.
type MemoryWindow struct {
	Path        string     `json:"path"`
	Lines       int        `json:"lines"`
	Bytes       int        `json:"bytes"`
	LoadedLines int        `json:"loaded_lines"`
	LoadedBytes int        `json:"loaded_bytes"`
	Loaded      string     `json:"loaded"` // the loaded text
	Cut         []CutEntry `json:"cut"`    // entries past the window
	// UnreadFrom is the line from which strata reads no sections or items
	// (markdown.MaxBlocks, MaxLines): the entries past it are not in Cut;
	// 0 when the file is read whole.
	UnreadFrom int `json:"unread_from,omitempty"`
}

// CutEntry is a heading or list item of MEMORY.md that Claude Code does not
// load (Partial: it starts inside the window and ends past it).
type CutEntry struct {
	Line    int    `json:"line"`
	Section string `json:"section"`
	Text    string `json:"text"`
	Partial bool   `json:"partial,omitempty"`
}

// GraphEntity is one L3 entity.
type GraphEntity struct {
	Name         string   `json:"name"`
	EntityType   string   `json:"entityType"`
	Observations []string `json:"observations"`
}

// snap is the view of one commit.
type snap struct{ s *engine.Snapshot }

func (v snap) read(rel string) ([]byte, bool) { return v.s.Read(rel) }
func (v snap) phaseFiles() []phase.TierFile   { return v.s.PhaseFiles() }
func (v snap) folders() []phase.Folder        { return v.s.Folders() }
func (v snap) whole(rel string) string {
	return fmt.Sprintf("strata show %s --rev %s", state.ShellWord(rel), state.ShortID(v.s.Commit))
}

// At reads the context as of a point of history. It writes nothing and
// expires nothing: a workflow past its TTL then is reported as it was.
func (a *Agent) At(p engine.Point) (*Context, error) {
	s, err := a.Eng.SnapshotAt(p)
	if err != nil {
		return nil, err
	}
	now := s.Time
	if now.IsZero() {
		now = a.Eng.Now()
	}
	c := &Context{Commit: s.Commit, Report: a.report(snap{s}, now), L1: []L1File{}, Entities: []GraphEntity{}}
	if !s.Time.IsZero() {
		t := s.Time
		c.At = &t
		// judged as Expire judges, whatever the status: a resume expires
		// a completed workflow past its TTL too; the TTL line then takes
		// the place of "continue the … workflow" (next)
		if d, ok := a.deadlineAt(s); ok && (&Expiry{Deadline: d}).Due(t) {
			c.PastTTL, c.then = &d, true
			c.Next = next(c.Report)
		}
	}
	cfg := a.Eng.Config()
	for _, p := range s.Paths() {
		k, _ := cfg.Classify(p)
		if !isSynced(k.Class) && k.Class != state.ClassClaudeJSON {
			continue
		}
		data, _ := s.Read(p)
		f := L1File{Path: p, Class: k.Class, TooLarge: s.NotRead(p) != nil}
		if !f.TooLarge && json.Valid(data) {
			f.Content = compactJSON(data)
		}
		c.L1 = append(c.L1, f)
	}
	// Provenance of each L1 version: a bounded walk back from the snapshot's
	// commit, one pass for all files.
	l1 := make([]string, len(c.L1))
	for i, f := range c.L1 {
		l1[i] = f.Path
	}
	last := s.LastChanges(l1)
	for i := range c.L1 {
		if en, ok := last[c.L1[i].Path]; ok {
			c.L1[i].Session, c.L1[i].ToolUse = en.Session, en.ToolUse
		}
	}
	if data, ok := s.Read(cfg.L2()); ok {
		c.Memory = Window(cfg.L2(), data)
	}
	if data, ok := s.Read(cfg.Graph); ok {
		c.Entities, c.Relations = Entities(data)
	}
	for _, err := range s.AllNotRead() {
		c.NotRead = append(c.NotRead, err.Error())
	}
	return c, nil
}

func compactJSON(data []byte) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, data) != nil {
		return nil
	}
	return b.Bytes()
}

// Window cuts MEMORY.md where Claude Code stops loading it and names the
// headings and list items past that point.
func Window(path string, data []byte) *MemoryWindow {
	w := &MemoryWindow{Path: path, Bytes: len(data), Cut: []CutEntry{}}
	end, lines := 0, 0
	for end < len(data) && lines < WindowLines {
		i := bytes.IndexByte(data[end:], '\n')
		next := len(data)
		if i >= 0 {
			next = end + i + 1
		}
		if next > WindowBytes {
			end = WindowBytes
			lines++ // a partly loaded line
			break
		}
		end = next
		lines++
	}
	w.Lines = bytes.Count(data, []byte("\n"))
	if len(data) > 0 && data[len(data)-1] != '\n' {
		w.Lines++
	}
	w.LoadedLines, w.LoadedBytes, w.Loaded = lines, end, strings.ToValidUTF8(string(data[:end]), "")
	if end >= len(data) {
		return w
	}
	d, err := markdown.Parse(data)
	if err != nil {
		return w
	}
	if d.ReadTo() < len(data) {
		w.UnreadFrom = d.Line(d.ReadTo())
	}
	for _, sec := range d.Sections() {
		if sec.Start >= end {
			w.Cut = append(w.Cut, CutEntry{Line: sec.StartLine, Section: sec.Heading, Text: strings.Repeat("#", sec.Level) + " " + sec.Heading})
		}
		for _, it := range sec.Items {
			if it.End > end {
				w.Cut = append(w.Cut, CutEntry{Line: it.Line, Section: sec.Heading, Text: it.Text, Partial: it.Start < end})
			}
		}
	}
	return w
}

// Entities reads the entities of an MCP memory graph file and counts its
// relations; lines it cannot read are skipped.
func Entities(data []byte) ([]GraphEntity, int) {
	out := []GraphEntity{}
	rels := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var e struct {
			Type string `json:"type"`
			GraphEntity
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		switch e.Type {
		case "entity":
			if e.Observations == nil {
				e.Observations = []string{}
			}
			out = append(out, e.GraphEntity)
		case "relation":
			rels++
		}
	}
	return out, rels
}

// Text renders the context for a person or an agent, one line a value, as
// Report.Text does.
func (c *Context) Text() string {
	q := state.TermSafe
	var b strings.Builder
	if c.At != nil {
		fmt.Fprintf(&b, "as of %s (commit %s)\n", c.At.Format(time.RFC3339), state.ShortID(c.Commit))
	} else {
		fmt.Fprintf(&b, "as of commit %s\n", state.ShortID(c.Commit))
	}
	b.WriteString(c.Report.Text())
	b.WriteString("L1 files:\n")
	if len(c.L1) == 0 {
		b.WriteString("  none\n")
	}
	for _, f := range c.L1 {
		switch {
		case f.TooLarge:
			fmt.Fprintf(&b, "  %s (over max_size: not read)\n", q(f.Path))
		case f.Content != nil:
			fmt.Fprintf(&b, "  %s: %s\n", q(f.Path), q(clipText(string(f.Content), 200)))
		default:
			fmt.Fprintf(&b, "  %s (not JSON)\n", q(f.Path))
		}
		if f.Session != "" || f.ToolUse != "" {
			fmt.Fprintf(&b, "    written by Claude Code session %s, tool use %s\n", q(orDash(f.Session)), q(orDash(f.ToolUse)))
		}
	}
	if m := c.Memory; m != nil {
		fmt.Fprintf(&b, "L2 %s: %d lines, %d bytes; Claude Code loads %d lines, %d bytes\n", q(m.Path), m.Lines, m.Bytes, m.LoadedLines, m.LoadedBytes)
		if m.UnreadFrom > 0 {
			// past the parse's bound no entry is known: counted, the cut
			// would look smaller than it is (attack35d L1)
			fmt.Fprintf(&b, "  not loaded: everything from line %d on is unread by strata too (more than %d blocks or lines), so its entries are not listed\n", m.UnreadFrom, markdown.MaxLines)
		}
		if len(m.Cut) > 0 {
			fmt.Fprintf(&b, "  not loaded (%d entries):\n", len(m.Cut))
			for _, e := range m.Cut {
				part := ""
				if e.Partial {
					part = " (partly)"
				}
				fmt.Fprintf(&b, "    line %d [%s]%s: %s\n", e.Line, q(e.Section), part, q(clipText(e.Text, 120)))
			}
		}
	} else {
		b.WriteString("L2: none\n")
	}
	fmt.Fprintf(&b, "L3 entities: %d, relations: %d\n", len(c.Entities), c.Relations)
	for _, e := range c.Entities {
		fmt.Fprintf(&b, "  %s (%s): %d observations\n", q(e.Name), q(e.EntityType), len(e.Observations))
	}
	for _, l := range c.NotRead {
		fmt.Fprintf(&b, "%s\n", q(l))
	}
	return b.String()
}

// clipText keeps the first n runes of one line of s.
func clipText(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// Peek is Resume without its writes: the report of the disk as it is now,
// nothing expired or recorded. A workflow state that Resume would expire
// (judgeDisk, Due: the one judgement of both) is reported as it stands,
// with PastTTL set, and the first next line says so and what `strata
// resume` would do, in place of "continue the … workflow". The read-only
// MCP server answers with it.
func (a *Agent) Peek() *Report {
	now := a.Eng.Now()
	r := a.report(disk{a}, now)
	if _, _, x, _, ok := a.judgeDisk(); ok && x.Due(now) {
		d := x.Deadline
		r.PastTTL = &d
		r.Next = next(r)
	}
	return r
}

// Pending lists the unresolved pending decisions of every Phase Outcome on
// disk or recorded, as `strata decisions` reads them.
func (a *Agent) Pending() []Decision {
	return decisionsOf(disk{a}.folders())
}

// deadlineAt is the TTL deadline of the workflow state recorded in s, as
// judge gives it for the state as recorded by then; ok is false when it
// has none (ttl: off, a state of the user's own shape, no lastUpdated), or
// when HEAD commits that very version, which no resume expires.
func (a *Agent) deadlineAt(s *engine.Snapshot) (time.Time, bool) {
	k, ok := a.workflowTTL()
	if !ok {
		return time.Time{}, false
	}
	data, ok := s.Read(k.Path)
	if !ok {
		return time.Time{}, false
	}
	// a version HEAD commits is never expired (judgeDisk): git put it
	// there, and resume leaves it (attack27-recheck N2)
	if a.Eng.CheckedOutBlob(engine.File{Kept: k, Content: data, Exists: true}.ID(), k.Path) {
		return time.Time{}, false
	}
	x, _, ok := a.judge(k, data, s.Time)
	if !ok {
		return time.Time{}, false
	}
	return x.Deadline, true
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
