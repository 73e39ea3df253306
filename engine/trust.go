package engine

import (
	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/state"
)

// saveOnDisk records what is on disk for paths a restore is about to
// overwrite or delete, before anything is written: a valid unrecorded
// version goes to the state ref (source record), an invalid one to the
// rejected ref, so nothing a restore replaces is lost. It returns the saved
// versions by path.
func (e *Engine) saveOnDisk(paths []config.Kept) (map[string]Outcome, error) {
	outs, err := e.Record(paths, state.SourceRecord)
	if err != nil {
		return nil, err
	}
	saved := map[string]Outcome{}
	for _, o := range outs {
		if o.Entry != nil || o.Rejected != nil {
			saved[o.Path] = o
		}
	}
	return saved, nil
}

// markSaved tells each outcome which unrecorded version was saved before
// the restore replaced it.
func markSaved(outs []Outcome, saved map[string]Outcome) {
	for i := range outs {
		if s, ok := saved[outs[i].Path]; ok {
			outs[i].Saved = s.Entry
			if s.Entry == nil {
				outs[i].Saved, outs[i].SavedRejected = s.Rejected, true
			}
			delete(saved, outs[i].Path)
		}
	}
}

// RejectedRef is the ref invalid versions are kept on.
func (e *Engine) RejectedRef() string { return e.Store.RejectedRef() }
