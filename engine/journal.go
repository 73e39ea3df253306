package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/strata-dev/strata/atomicfile"
	"github.com/strata-dev/strata/state"
)

// The sync journal makes a sync's write phase recoverable. A sync moves the
// state ref to the merged head and then writes the kept files whose version
// changed; a crash between the two would leave the old files on disk, and
// the next record (or the watcher's catch-up) would record them as new local
// edits and the next sync would push them: the other machine's work reverted
// everywhere. So, before the ref moves, the sync writes the journal of the
// writes it owes (path, the version on disk it expects, the merged version),
// and removes it when they are done. Every Record and every sync first
// completes a journal left behind: an entry whose merged version is what the
// state ref now records and whose file on disk is still the expected old
// version is written; anything else (the ref never moved, the file was
// edited since) is left alone. The journal is then removed.

// JournalEntry is one write a sync owes the work tree. Ours and Result are
// blob ids; "" means the file is absent.
type JournalEntry struct {
	Path   string `json:"path"`
	Ours   string `json:"ours"`
	Result string `json:"result"`
}

type journal struct {
	Writes []JournalEntry `json:"writes"`
}

func (e *Engine) journalPath() string {
	if e.display != "" {
		return filepath.Join(e.store.GitDir(), "strata", "sync-journal-home") // the home view's (home.go)
	}
	return filepath.Join(e.store.GitDir(), "strata", "sync-journal")
}

// BeginWrites durably records the writes a sync is about to owe, before the
// state ref moves. An empty list writes no journal.
func (e *Engine) BeginWrites(entries []JournalEntry) error {
	if len(entries) == 0 {
		return nil
	}
	data, err := json.Marshal(journal{Writes: entries})
	if err != nil {
		return err
	}
	name := e.journalPath()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return fmt.Errorf("sync journal: %w", err)
	}
	if err := atomicfile.Write(name, data, 0o644); err != nil {
		return fmt.Errorf("sync journal: %w", err)
	}
	return nil
}

// EndWrites removes the journal once every owed write is done.
func (e *Engine) EndWrites() error {
	err := os.Remove(e.journalPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// RecoverWrites completes the writes of a sync that was interrupted (see
// above) and returns the paths it wrote. Without a journal it does nothing.
func (e *Engine) RecoverWrites() ([]string, error) {
	data, err := os.ReadFile(e.journalPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sync journal: %w", err)
	}
	var j journal
	if err := json.Unmarshal(data, &j); err != nil {
		// A torn journal was never complete, so the ref never moved past it.
		return nil, e.EndWrites()
	}
	_, files, err := e.recorded()
	if err != nil {
		return nil, err
	}
	// A sync killed between writing its temp files and renaming them left
	// them beside the files it owed (Checkouts): remove them.
	dirs := map[string]bool{}
	for _, w := range j.Writes {
		if k, ok := e.cfg.Classify(w.Path); ok && !dirs[filepath.Dir(e.cfg.Abs(k.Path))] {
			dirs[filepath.Dir(e.cfg.Abs(k.Path))] = true
			atomicfile.Leftovers(filepath.Dir(e.cfg.Abs(k.Path)))
		}
	}
	var wrote []string
	for _, w := range j.Writes {
		k, ok := e.cfg.Classify(w.Path)
		if !ok || files[w.Path] != w.Result || w.Ours == w.Result {
			continue // not kept here, or the ref does not hold the merged version
		}
		written, err := e.checkout(k, w.Ours, w.Result)
		var unreadable *state.Problem
		if errors.As(err, &unreadable) {
			continue // not a readable regular file any more: left alone
		}
		if err != nil {
			return wrote, fmt.Errorf("sync journal: %s: %w", w.Path, err)
		}
		if !written {
			continue // edited since: that edit is newer and will be recorded
		}
		wrote = append(wrote, w.Path)
	}
	return wrote, e.EndWrites()
}
