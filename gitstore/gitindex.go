package gitstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"strings"

	"github.com/strata-dev/strata/state"
)

// The local-changes flags git keeps on an index entry. A file carrying one
// has a version in the work tree that git was told never to look at, so
// never to publish: `git update-index --skip-worktree` (the usual way to
// keep a real password in a committed template) or `--assume-unchanged`.
const (
	SkipWorktree    = "skip-worktree"
	AssumeUnchanged = "assume-unchanged"
)

// indexEntry is what the in-process reader keeps of a stage-0 entry.
type indexEntry struct {
	hidden string // SkipWorktree, AssumeUnchanged or ""
	// valid is the assume-unchanged bit under a skip-worktree one: the
	// flag left when git clears skip-worktree (Ignores.Hidden)
	valid bool
}

// The index file's bits strata reads (git's Documentation/gitformat-index).
const (
	ceValid        = 0x8000 // flags: assume-valid (--assume-unchanged)
	ceExtended     = 0x4000 // flags: an extended flags word follows (v3+)
	ceSkipWorktree = 0x4000 // extended flags
	ceIntentToAdd  = 0x2000 // extended flags
	ceNameMask     = 0x0fff
	indexHashSize  = 20 // SHA-1; strata's stores are SHA-1 (format.go)
)

// errIndexPartial wraps why an index holds more than its own file tells:
// a split index (its `link` extension: most entries live in a shared
// index file), a sparse index (directory entries, its `sdir` extension),
// an extension git requires readers to know, or a version this reader
// does not know. Its paths are asked of git itself (lsFilesIndex).
type errIndexPartial struct{ why string }

func (e *errIndexPartial) Error() string { return e.why }

// readIndexEntries reads the stage-0 entries of an index file, path ->
// entry, with their local-changes flags, as `git ls-files -v` lists them.
// Entries in conflict and intent-to-add entries are left out (Staged). A
// missing file is an empty index. An index this reader cannot read whole
// gives an *errIndexPartial.
func readIndexEntries(file string) (map[string]indexEntry, error) {
	data, err := state.ReadRegular(file, 0, true)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]indexEntry{}, nil
	}
	if err != nil {
		return nil, err
	}
	bad := errors.New("index " + file + " is damaged")
	if len(data) < 12+indexHashSize || string(data[:4]) != "DIRC" {
		return nil, bad
	}
	version := binary.BigEndian.Uint32(data[4:])
	if version < 2 || version > 4 {
		return nil, &errIndexPartial{fmt.Sprintf("version %d", version)}
	}
	count := binary.BigEndian.Uint32(data[8:])
	end := len(data) - indexHashSize
	out := make(map[string]indexEntry, min(int(count), end/62))
	var prev []byte // v4 names are stored as a change from the previous one
	at := 12
	for range count {
		start := at
		at += 40 + indexHashSize
		if at+2 > end {
			return nil, bad
		}
		mode := binary.BigEndian.Uint32(data[start+24:])
		flags := binary.BigEndian.Uint16(data[at:])
		at += 2
		var ext uint16
		if flags&ceExtended != 0 {
			if version < 3 || at+2 > end {
				return nil, bad
			}
			ext = binary.BigEndian.Uint16(data[at:])
			at += 2
		}
		var name []byte
		if version == 4 {
			strip, n := indexVarint(data[at:end])
			if n == 0 || strip > uint64(len(prev)) {
				return nil, bad
			}
			at += n
			nul := bytes.IndexByte(data[at:end], 0)
			if nul < 0 {
				return nil, bad
			}
			name = append(prev[:len(prev)-int(strip):len(prev)-int(strip)], data[at:at+nul]...)
			at += nul + 1
		} else {
			nul := bytes.IndexByte(data[at:end], 0)
			if nul < 0 {
				return nil, bad
			}
			name = data[at : at+nul]
			// 1 to 8 NULs pad the entry to a multiple of 8 bytes
			at = start + (at-start+nul+8)&^7
			if at > end {
				return nil, bad
			}
		}
		prev = name
		if mode&0o170000 == 0o040000 || bytes.HasSuffix(name, []byte("/")) {
			return nil, &errIndexPartial{"sparse index"}
		}
		if (flags>>12)&3 != 0 || ext&ceIntentToAdd != 0 {
			continue
		}
		e := indexEntry{valid: flags&ceValid != 0}
		switch {
		case ext&ceSkipWorktree != 0:
			e.hidden = SkipWorktree
		case flags&ceValid != 0:
			e.hidden = AssumeUnchanged
		}
		out[string(name)] = e
	}
	for at+8 <= end {
		sig := string(data[at : at+4])
		size := int(binary.BigEndian.Uint32(data[at+4:]))
		switch {
		case sig == "link":
			return nil, &errIndexPartial{"split index"}
		case sig == "sdir":
			return nil, &errIndexPartial{"sparse index"}
		case sig[0] < 'A' || sig[0] > 'Z':
			return nil, &errIndexPartial{"extension " + state.TermSafe(sig)}
		}
		if size < 0 || size > end-at-8 {
			return nil, bad
		}
		at += 8 + size
	}
	return out, nil
}

// indexVarint decodes git's offset varint (varint.c) at the start of b;
// n is 0 when b does not start with one.
func indexVarint(b []byte) (v uint64, n int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	v, n = uint64(c&127), 1
	for c&128 != 0 {
		if n >= len(b) || n > 9 {
			return 0, 0
		}
		v++
		c = b[n]
		n++
		v = v<<7 + uint64(c&127)
	}
	return v, n
}

// lsFilesTag reads one record of `git ls-files -v -z`: its path, whether
// it is a tracked one (tag H, S, or M for a path in conflict, which git
// tracks too) and its local-changes flag (S: skip-worktree; a lower-case
// tag: assume-unchanged).
func lsFilesTag(rec string) (path, hidden string, ok bool) {
	if len(rec) < 3 || rec[1] != ' ' {
		return "", "", false
	}
	tag, path := rec[0], rec[2:]
	switch tag {
	case 'H', 'S', 'M':
	case 'h', 's', 'm':
		hidden = AssumeUnchanged
	default:
		return "", "", false
	}
	if tag == 'S' || tag == 's' {
		hidden = SkipWorktree
	}
	return path, hidden, true
}

// lsFilesIndex asks git for the index's paths and their flags
// (`git ls-files -v -z` in the work tree, once), for an index the
// in-process reader cannot read whole.
func lsFilesIndex(ctx context.Context, root string) (map[string]indexEntry, error) {
	cmd := Command(exec.CommandContext(ctx, "git", "ls-files", "-v", "-z"), root)
	boundWait(cmd)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		return nil, &gitError{args: []string{"ls-files"}, stderr: stderr.String(), err: err}
	}
	out := map[string]indexEntry{}
	for _, rec := range strings.Split(stdout.String(), "\x00") {
		if p, hidden, ok := lsFilesTag(rec); ok {
			out[p] = indexEntry{hidden: hidden}
		}
	}
	return out, nil
}
