package syncer

import (
	"errors"
	"sync"

	"github.com/strata-dev/strata/engine"
)

// wouldKeep is the judgement checkMerge makes of a version a remote offers
// a machine with no version of its own (no history: nothing to compare
// against but nothing): it keeps its own (none) when the version is over
// max_size, fails its checks, or would change what Claude Code runs. Fetch
// asks it of each file an older strata's kept local commit drops from the
// remote's tree without a delete block (gitstore.Remote.WouldKeep): a drop
// this machine would not make itself is a deletion nobody's log would show,
// and the commit is refused (attack24 recheck H1). A path this work tree
// does not keep is merged as it is, never kept local: false. It holds lock,
// as every use of the engine beside a recorder does: Fetch runs while
// scanUnrecorded does.
func wouldKeep(eng *engine.Engine, lock sync.Locker) func(path, blob string) bool {
	return func(path, blob string) bool {
		lock.Lock()
		defer lock.Unlock()
		k, ok := eng.Config().Classify(path)
		if !ok {
			return false
		}
		data, err := eng.Blob(blob)
		if err != nil {
			var tl *engine.TooLargeError
			return errors.As(err, &tl)
		}
		if eng.Check(engine.File{Kept: k, Content: data, Exists: true}, nil).Invalid() {
			return true
		}
		whole, runs := engine.ClaudeRuns(path)
		return runs && len(engine.ChangesWhatRuns(nil, data, whole)) > 0
	}
}
