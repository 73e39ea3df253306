package engine

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/strata-dev/strata/config"
)

// A file only a .strata.yaml rule keeps is kept while git tracks it, as
// the index read in-process says (attack25 K4): a `git add` keeps it from
// the next batch (Forget), a `git rm --cached` makes it private again, and
// sync then refuses to publish the version recorded while it was tracked.
// sync asks git itself (git ls-files), so an index read before the
// `git rm --cached` does not let it out either.
func TestUntrackedOnlyUserRuleFollowsTheIndex(t *testing.T) {
	e := withConfig(t, newRepo(t), "files:\n  - {glob: \"config/*\", schema: yaml}\n")
	root := e.Config().Root
	git := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	edit(t, e, "config/app.yml", "a: 1\n")
	if _, ok := e.Config().Classify("config/app.yml"); ok {
		t.Fatal("an untracked config/app.yml is kept")
	}
	if why := e.Config().Private("config/app.yml"); why != config.WhyUntracked {
		t.Fatalf("private %q, want %q", why, config.WhyUntracked)
	}
	git("add", "config/app.yml")
	e.Forget()
	record(t, e, "config/app.yml")
	head := mustHead(t, e)
	if ps, err := e.Unpublishable(context.Background(), head, "", ""); err != nil || len(ps) > 0 {
		t.Fatalf("tracked: Unpublishable = %v, %v; want nothing", ps, err)
	}
	git("rm", "-q", "--cached", "config/app.yml")
	// the index as read before: in-process it is still tracked, git says not
	if _, ok := e.Config().Classify("config/app.yml"); !ok {
		t.Fatal("the index read before the git rm is read again")
	}
	ps, err := e.Unpublishable(context.Background(), head, "", "")
	if err != nil || len(ps) != 1 || !strings.Contains(ps[0].Message, "private: "+config.WhyUntracked) {
		t.Fatalf("untracked: Unpublishable = %v, %v; want config/app.yml refused as private", ps, err)
	}
	e.Forget()
	if _, ok := e.Config().Classify("config/app.yml"); ok {
		t.Fatal("kept after git rm --cached")
	}
	if ps, err = e.Unpublishable(context.Background(), head, "", ""); err != nil || len(ps) != 1 {
		t.Fatalf("untracked, read again: Unpublishable = %v, %v; want config/app.yml refused", ps, err)
	}
	git("config", "--add", "strata.keepPrivate", "config/app.yml")
	e = withConfig(t, e, "files:\n  - {glob: \"config/*\", schema: yaml}\n")
	if ps, err = e.Unpublishable(context.Background(), head, "", ""); err != nil || len(ps) > 0 {
		t.Fatalf("strata.keepPrivate: Unpublishable = %v, %v; want nothing", ps, err)
	}
}
