package engine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/state"
	"github.com/strata-dev/strata/validate"
)

// Decode reads a path's version recorded in commit and decodes it as the
// documents it holds (see validate.DecodeDocs), with the format its rule
// says. A version that is not well-formed gives its problems as the error;
// a commit without the path gives an error wrapping state.ErrNotFound.
// `strata timeline` reads workflow phases, Phase Outcomes and resolutions
// through it.
func (e *Engine) Decode(commit, path string) ([]any, error) {
	data, err := e.readAt(commit, path)
	if err != nil {
		return nil, err
	}
	format := ""
	if k, ok := e.cfg.Classify(path); ok {
		format = k.Format
	}
	docs, ps := validate.DecodeDocs(path, data, format)
	if ps.Invalid() {
		return nil, ps
	}
	return docs, nil
}

// DecodeKey names a path's version in commit without reading its content:
// key is the same for two versions Decode gives the same documents (their
// blob's id and the format they are decoded with), and size is the
// version's length. A version over max_size is refused as FileAt refuses
// it (matching state.ErrTooLarge); a commit without the path gives an
// error wrapping state.ErrNotFound. `strata timeline` decodes each key
// once.
func (e *Engine) DecodeKey(commit, path string) (key string, size int64, err error) {
	id, err := e.store.BlobID(commit, path)
	if err != nil {
		return "", 0, err
	}
	if size, err = e.store.BlobSize(id); err != nil {
		return "", 0, err
	}
	if size > e.cfg.MaxSize {
		return "", 0, &TooLargeError{Path: e.shown(path), Blob: id, Size: size, Limit: e.cfg.MaxSize}
	}
	format := ""
	if k, ok := e.cfg.Classify(path); ok {
		format = k.Format
	}
	if format == "" {
		format = validate.FormatOf(path)
	}
	return id + " " + format, size, nil
}

// HistoryHeads names what the history's readers (Log, RejectedLog and the
// versions they list: `strata timeline`) read from: the heads of the state
// and rejected refs, and with home, of the home ref's two when the
// auto-memory file has a home history (a page without the home ref's
// events does not watch it). While it gives the same answer, so does every read
// of the history; a ref moved, made or removed changes it. A ref that
// cannot be read is an error.
func (e *Engine) HistoryHeads(home bool) (string, error) {
	var b strings.Builder
	heads := func(s *gitstore.Store) error {
		for _, ref := range []string{s.StateRef(), s.RejectedRef()} {
			h, err := s.Head(ref)
			if errors.Is(err, state.ErrNotFound) {
				h, err = "none", nil
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "%s %s\n", ref, h)
		}
		return nil
	}
	if err := heads(e.store); err != nil {
		return "", err
	}
	if home && e.display == "" && e.cfg.Home != "" {
		h, err := e.homeView()
		if err != nil {
			return "", err
		}
		if err := heads(h.store); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}
