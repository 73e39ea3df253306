package engine

import (
	"fmt"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/state"
)

// What a sync's merge needs from the engine, beyond recording and writing.

// CheckSchema validates a file's content with its schema only, without the
// rules that need history or other files. A sync uses it for a version it
// keeps beside another under a new name: the version was checked in full
// where it was written, and its new neighbour is the point of keeping both.
func (e *Engine) CheckSchema(f File) state.Problems {
	if !f.Exists {
		return nil
	}
	return e.v.Validate(f.Path, f.Content, f.Schema)
}

// MergeKept classifies a repo-relative path by the configuration; false
// when the path is not kept.
func (e *Engine) MergeKept(path string) (config.Kept, bool) { return e.cfg.Classify(path) }

// TooLargeError is a recorded version over max_size, refused by the size in
// its object header before it is read. Path is set when the version was
// asked for by its path (a reader of history: show, diff, log -p, at,
// timeline...); it matches state.ErrTooLarge.
type TooLargeError struct {
	Path        string
	Blob        string
	Size, Limit int64
}

func (e *TooLargeError) Error() string {
	if e.Path != "" {
		return fmt.Sprintf("%s: recorded version is %d bytes, larger than max_size %d; not read", e.Path, e.Size, e.Limit)
	}
	return fmt.Sprintf("blob %s is %d bytes, larger than max_size %d", e.Blob, e.Size, e.Limit)
}

// Is makes a *TooLargeError match state.ErrTooLarge.
func (e *TooLargeError) Is(target error) bool { return target == state.ErrTooLarge }

// MergeFiles lists the files of a recorded snapshot: path -> blob id.
func (e *Engine) MergeFiles(commit string) (map[string]string, error) { return e.store.Files(commit) }
