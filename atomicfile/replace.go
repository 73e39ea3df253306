package atomicfile

import (
	"errors"
	"io/fs"
	"time"
)

// A file added by Add replaces its target only while the target is the
// file the caller expects (Batch.Unchanged). A plain rename cannot make
// that check and the replacement one step: an outside writer (an agent
// saving by temp file and rename, taking no lock) whose rename lands
// between them would be replaced, its version stored nowhere. So on Linux
// Commit swaps the temp file and the target (renameat2(2) with
// RENAME_EXCHANGE) and asks Unchanged about the file it swapped out, now
// at the temp name: the file the rename would have freed. When that is not
// the file expected, it swaps back; an outside rename landing between the
// two swaps (its file then at the temp name, strata's gone) is swapped
// back in turn, so the newest outside file ends at the name. Only
// strata's own temp file is ever removed. A file system that cannot swap
// gets the check right before a plain rename, as before. A writer that
// opened the target before the swap and writes to it after (in place: a
// shell's `>>`, an editor saving in place) writes into the file swapped
// out: with Batch.Settle set, the swapped-out file stays at the temp name
// for that long and is asked about again, so such a write landing within
// it is swapped back too; one landing later is lost with the file (Append
// avoids the swap for a version that only adds at the end). A process killed
// between the swap and its look at the file swapped out leaves that file,
// perhaps an outside save, at the temp name: a Leftover, which is never
// removed unsaved.

// errNoExchange: the file system cannot swap two files (see exchange).
var errNoExchange = errors.New("no exchange of two files here")

// ReplaceStep, set by tests only (also other packages'), is called at the
// moments of a replace where an outside writer's rename is tested, with
// the target's name:
// "checked" once Unchanged has accepted the target, right before the
// swap; "accepted" once it has accepted the file swapped out, before
// Settle; "swapped" right before each swap that puts an outside file back.
var ReplaceStep func(step, name string)

// putBackTries bounds putBack's swaps, each of which an outside rename
// landing right before the next makes necessary.
const putBackTries = 100

// replace puts p's named temp file at p.name in place of the file there,
// which b.Unchanged (set) has just accepted, if that file is still the one
// replaced, and reports whether it did. When it did not, p.name holds the
// newest outside file. It removes the temp file unless it returns an
// error (the temp file is then strata's own, at p.tmp, for the caller to
// remove) or an outside file is left there (see putBack).
func (b *Batch) replace(p batchFile) (bool, error) {
	if ReplaceStep != nil {
		ReplaceStep("checked", p.name)
	}
	mine, err := p.d.hold(p.tmp)
	if err != nil {
		return false, err
	}
	defer mine.release()
	if p.info != nil && !mine.is(p.info) && mine.held() {
		// not the temp file Add made: another process's file or link at
		// its name never goes in place of the kept file (attack36e M1)
		p.d.remove(p.tmp)
		return false, nil
	}
	err = p.d.exchange(p.tmp, p.base)
	switch {
	case errors.Is(err, errNoExchange):
		if err := p.d.rename(p.tmp, p.base); err != nil {
			return false, err
		}
		return p.d.landed(p.base, p.info), nil // (see Commit's place)
	case errors.Is(err, fs.ErrNotExist): // removed since the check: an edit too
		p.d.remove(p.tmp)
		return false, nil
	case err != nil:
		return false, err
	}
	if !mine.is(p.d.stat(p.base)) {
		// the temp name was swapped between the hold and the exchange:
		// what went to the kept name is not strata's file; the file that
		// was there goes back (attack36e M1)
		_ = p.d.exchange(p.tmp, p.base)
		return false, nil
	}
	if b.Unchanged(p.name, p.d.stat(p.tmp)) {
		if ReplaceStep != nil {
			ReplaceStep("accepted", p.name)
		}
		// An outside writer holding the file open writes into it where it
		// now is, at the temp name: looked at again after Settle, and
		// swapped back when it changed meanwhile (see Batch.Settle).
		if b.Settle > 0 {
			time.Sleep(b.Settle)
			if !b.Unchanged(p.name, p.d.stat(p.tmp)) {
				b.putBack(p, mine)
				return false, nil
			}
		}
		p.d.remove(p.tmp) // the file expected, as the rename would have freed it
		return true, nil
	}
	b.putBack(p, mine)
	return false, nil
}

// putBack swaps back the outside file that replace swapped out of p.name
// (now at p.tmp), where mine, strata's new file, went. After each swap the
// file at p.tmp is the one swapped put at p.name before it, unless an
// outside rename landed at p.name in between: that file is then the newest
// and goes to p.name by one more swap. The file left at p.tmp in the end
// is removed only when it is mine; else it is an outside version that its
// writer's own later rename superseded, left there as it is: once this
// process has ended it is a Leftover, which the engine records before it
// removes it.
func (b *Batch) putBack(p batchFile, mine held) {
	atName, ours := mine, true // the file last swapped to p.name, held; whether it is mine
	defer func() {
		if !ours {
			atName.release()
		}
	}()
	for range putBackTries {
		if ReplaceStep != nil {
			ReplaceStep("swapped", p.name)
		}
		out, err := p.d.hold(p.tmp) // an outside file, to go to p.name
		if err != nil {
			return
		}
		if err := p.d.exchange(p.tmp, p.base); err != nil {
			out.release()
			return // p.name removed meanwhile: the outside file stays at p.tmp
		}
		landed := !atName.is(p.d.stat(p.tmp))
		if !landed && ours {
			p.d.remove(p.tmp)
		}
		if !ours {
			atName.release()
		}
		atName, ours = out, false
		if !landed {
			return // out, the newest, is at p.name
		}
	}
}
