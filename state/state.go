// Package state holds the types every strata package shares: the classes of
// kept files, the sources of a change, recorded history entries and
// validation problems. It depends on nothing outside the standard library.
package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Class names the kind of a kept file (docs/contract.md §1).
type Class string

// The classes of kept files.
const (
	ClassWorkflowState      Class = "workflow-state"
	ClassInitiative         Class = "initiative"
	ClassInterviewState     Class = "interview-state"
	ClassDelegationLog      Class = "delegation-log"
	ClassClaudeJSON         Class = "claude-json" // any other .claude/*.json: well-formed JSON, no schema
	ClassPhaseOutput        Class = "phase-output"
	ClassPhaseOutcome       Class = "phase-outcome"
	ClassDecisionResolution Class = "decision-resolution"
	ClassMemory             Class = "memory" // L2 MEMORY.md
	ClassGraph              Class = "graph"  // L3 MCP memory JSONL
)

// Immutable reports whether a recorded file of this class may never change again.
func (c Class) Immutable() bool {
	return c == ClassPhaseOutcome || c == ClassDecisionResolution
}

// Source says who recorded a change; it is written to the Strata-Source trailer.
type Source string

// The sources of a recorded change.
const (
	SourceWatch   Source = "watch"
	SourceRecord  Source = "record"
	SourceHook    Source = "hook"
	SourceRestore Source = "restore"
	SourceResolve Source = "resolve"
	SourceSync    Source = "sync"
	SourceExpire  Source = "expire"
	SourceInit    Source = "init"
)

// Action is what a recorded change did to its path.
type Action string

// The actions of a recorded change.
const (
	ActionAdd    Action = "add"
	ActionUpdate Action = "update"
	ActionDelete Action = "delete"
	// ActionMerge is the one log entry of a merge commit that changed no
	// path (its decisions all kept the local versions).
	ActionMerge Action = "merge"
)

// Change is one version of one kept file, ready to be recorded.
type Change struct {
	Path    string // slash-separated, repo-relative; "~/..." for a kept file under the home directory
	Content []byte // the file's bytes; ignored when Deleted
	Deleted bool
	Class   Class
	Schema  string // schema name used to validate it: a built-in name, "json", or a repo-relative schema file
	Source  Source
	Time    time.Time // when the change was seen; becomes the committer time
	// Session and ToolUse name the Claude Code session and tool call that
	// wrote this version, when its PostToolUse hook saw it (provenance).
	Session, ToolUse string
	// AtHead, when set, is the user's checked-out commit (HEAD) at the
	// time, which holds this very version: one git put in the work tree (a
	// checkout, a stash, a reset, a pull) or the one last committed
	// (Strata-Head trailer). A sync never writes such a version of another
	// machine over a local edit (see syncer).
	AtHead string
}

// ShortID abbreviates a commit id to the 10 characters strata prints.
func ShortID(id string) string {
	if len(id) > 10 {
		return id[:10]
	}
	return id
}

// Entry is one path changed by one recorded commit, as `strata log` shows it.
type Entry struct {
	Commit string    `json:"commit"`
	Time   time.Time `json:"time"`
	Path   string    `json:"path"`
	Action Action    `json:"action"`
	Source Source    `json:"source"`
	Class  Class     `json:"class"`
	Schema string    `json:"schema,omitempty"`
	Home   bool      `json:"home,omitempty"` // recorded on the local home ref (the auto-memory file), not the state ref
	// Session and ToolUse: the Claude Code session and tool call that wrote
	// the version (Strata-Session, Strata-Tool-Use trailers), when known.
	Session string `json:"session,omitempty"`
	ToolUse string `json:"tool_use,omitempty"`
	// AtHead: the checked-out commit that held this version when it was
	// recorded (Strata-Head trailer), when it did.
	AtHead string `json:"at_head,omitempty"`
	// Parent: the commit before Commit on the ref's chain, which the entry's
	// change is against ("" for the first): the first parent, or for a merge
	// this machine was fast-forwarded to, the parent the ref stood at.
	Parent string `json:"-"`
}

// Sentinel errors shared by every package. Lower layers translate their
// libraries' errors into these at their boundary.
var (
	ErrNotFound  = errors.New("not found")
	ErrLocked    = errors.New("locked")
	ErrUnchanged = errors.New("unchanged")
	ErrNotRepo   = errors.New("not a git repository")
	// ErrDamaged is a history that cannot be read to its end: a commit of
	// a ref's chain is missing from the object store (git gc --prune=now
	// beside a writer, a lost pack).
	ErrDamaged = errors.New("history damaged")
)

// Problem is one validation finding about one file. Its text follows the one
// grammar of strata's errors: PATH:LINE:COL: POINTER: message. Line and Col
// are 1-based; 0 means the problem concerns the whole file. Pointer is an RFC
// 6901 JSON Pointer ("" is the document root, shown as "/").
type Problem struct {
	Path    string `json:"path"`
	Line    int    `json:"line,omitempty"`
	Col     int    `json:"column,omitempty"`
	Pointer string `json:"pointer"`
	Message string `json:"message"`
	Warning bool   `json:"warning,omitempty"` // reported but does not make the file invalid
}

func (p Problem) Error() string {
	var b strings.Builder
	b.WriteString(ShownPath(p.Path)) // one line whatever the name
	if p.Line > 0 {
		b.WriteString(":" + strconv.Itoa(p.Line) + ":" + strconv.Itoa(max(p.Col, 1)))
	}
	b.WriteString(": ")
	ptr := p.Pointer
	if ptr == "" {
		ptr = "/"
	}
	b.WriteString(cutLong(shortPointer(ptr)) + ": ")
	if p.Warning {
		b.WriteString("warning: ")
	}
	b.WriteString(cutLong(p.Message))
	return b.String()
}

// maxLine bounds the pointer and the message of an error line: a message
// quoting a key of megabytes (a remote's file of duplicate keys made a sync
// print 490 MB: attack19 verify-remote N6) keeps its start and its size.
// --json keeps both whole.
const maxLine = 1000

// cutLong cuts s past maxLine bytes (at a UTF-8 boundary), saying how long
// it was.
func cutLong(s string) string {
	if len(s) <= maxLine {
		return s
	}
	cut := maxLine
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("…(%d bytes in all)", len(s))
}

// shortPointer keeps an error line readable when a document nests
// thousands of levels deep: a pointer over 160 bytes keeps its first six
// and last three elements around the count of those left out. --json
// gives the whole pointer.
func shortPointer(ptr string) string {
	if len(ptr) <= 160 {
		return ptr
	}
	els := strings.Split(ptr[1:], "/")
	if len(els) <= 9 {
		return ptr
	}
	return "/" + strings.Join(els[:6], "/") + fmt.Sprintf("/…(%d more)…/", len(els)-9) + strings.Join(els[len(els)-3:], "/")
}

// MarshalJSON writes the problem as the contract gives it, the document
// root's pointer as "/" (as Error writes it) whichever finder made it.
func (p Problem) MarshalJSON() ([]byte, error) {
	type plain Problem // without this method
	if p.Pointer == "" {
		p.Pointer = "/"
	}
	return json.Marshal(plain(p))
}

// Problems is the list of findings for one or more files.
type Problems []Problem

// Invalid reports whether any problem is an error rather than a warning.
func (ps Problems) Invalid() bool {
	for _, p := range ps {
		if !p.Warning {
			return true
		}
	}
	return false
}

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.Error()
	}
	return strings.Join(lines, "\n")
}

// OwnershipError is a repository that git refuses for "dubious ownership":
// its work tree's top directory, its .git, or the git directory a .git file
// names is owned by a user other than the one running strata, and no
// safe.directory setting names it. It matches ErrNotRepo with errors.Is, as
// git then takes the directory for no repository at all.
type OwnershipError struct {
	Dir   string // the repository as git names it: the work tree's top directory, or the git directory of a bare one
	Path  string // what another user owns (Dir, its .git, or the git directory)
	Owner int    // Path's owner
	UID   int    // whose a path must be: who strata runs as, or, Sudo, $SUDO_UID (as git)
	// Sudo: strata runs as root through sudo ($SUDO_UID a number other
	// than 0), and git takes a path of root's or of UID's, the user sudo
	// runs it for: UID is not who strata runs as.
	Sudo bool
}

func (e *OwnershipError) Error() string {
	return fmt.Sprintf("%s: dubious ownership (%s): git refuses such a repository and so does strata; to trust it: %s",
		TermSafe(e.Dir), e.Owners(), e.Fix())
}

// Owners says whose Path is and whose it had to be: "PATH is owned by uid
// N, strata runs as uid M", or under sudo, where strata runs as root, that
// it is neither root's nor the sudo user's.
func (e *OwnershipError) Owners() string {
	if e.Sudo {
		return fmt.Sprintf("%s is owned by uid %d, neither by root, which strata runs as through sudo, nor by uid %d, the user sudo runs it for",
			TermSafe(e.Path), e.Owner, e.UID)
	}
	return fmt.Sprintf("%s is owned by uid %d, strata runs as uid %d", TermSafe(e.Path), e.Owner, e.UID)
}

// Fix is git's own advice for the repository.
func (e *OwnershipError) Fix() string {
	return "git config --global --add safe.directory " + ShellWord(e.Dir)
}

func (e *OwnershipError) Unwrap() error { return ErrNotRepo }
