package engine

import "github.com/strata-dev/strata/gitstore"

// StagedFile is one stage-0 entry of a git index.
type StagedFile = gitstore.StagedFile

// Staged returns the stage-0 entries of an index file, path -> entry; ""
// means the work tree's own index (see gitstore.Store.Staged).
func (e *Engine) Staged(indexFile string) (map[string]StagedFile, error) {
	return e.store.Staged(indexFile)
}

// ResolveRev resolves a commit-ish of the state ref or of the user's own
// branches; an error wrapping state.ErrNotFound when it names nothing.
func (e *Engine) ResolveRev(rev string) (string, error) {
	return e.store.Resolve(rev)
}

// TreeFiles returns the files (path -> blob id) of a commit's tree, walking
// only the directories descend accepts.
func (e *Engine) TreeFiles(commit string, descend func(dir string) bool) (map[string]string, error) {
	return e.store.FilesWhere(commit, descend)
}
