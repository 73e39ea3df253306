package engine

import (
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
