package syncer

import (
	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/state"
)

// keepWhatRuns keeps the local version of a Claude Code settings file when
// the merged one would change what Claude Code runs (attack19-remote 8:
// whoever can push refs/strata/state set hooks and apiKeyHelper commands
// that the victim's next session ran, with none of the review a commit of
// the file gets). The local version stays, named with its reason; the
// user takes the other with strata restore after reading it.
func keepWhatRuns(eng *engine.Engine, p *engine.MergePath, result []byte, theirs string) (bool, error) {
	whole, ok := engine.ClaudeRuns(p.Path)
	if !ok || p.Result == p.Ours {
		return false, nil
	}
	var ours []byte
	// against what runs here: none when this machine's file is absent
	// because a sync kept the ref's version without taking it (NotTaken)
	if p.Ours != "" && eng.NotTaken()[p.Path] != p.Ours {
		var err error
		if ours, err = eng.Blob(p.Ours); err != nil {
			return false, err
		}
	}
	changed := engine.ChangesWhatRuns(ours, result, whole)
	if len(changed) == 0 {
		return false, nil
	}
	word := state.ShellWord(p.Path)
	p.KeptLocal = "the other version changes what Claude Code runs (" + engine.ShownChanges(changed) + "), and is not taken without you: read it (strata show " + word + " --rev " + theirs + "), then take it if you trust it (strata restore " + word + " --rev " + theirs + ")"
	p.Result, p.Content, p.Merged = p.Ours, nil, nil
	return true, nil
}
