package engine

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/strata-dev/strata/config"
)

// A file only a .strata.yaml rule keeps is kept while git tracks it and
// HEAD's commit holds it, as the index and HEAD read in-process say
// (attack25 K4): a `git add` and `git commit` keep it from the next batch
// (Forget; staged only, it is private), a `git rm --cached` makes it
// private again, and
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
	// only staged: private until a commit holds it
	if why := e.Config().Private("config/app.yml"); why != config.WhyStagedOnly {
		t.Fatalf("staged: private %q, want %q", why, config.WhyStagedOnly)
	}
	git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "app")
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

// A kept file whose local changes git is told to ignore (skip-worktree,
// assume-unchanged) is private, a built-in rule's file as much as one only
// a .strata.yaml rule keeps (attack26 F1), and sync asks git itself (git
// ls-files -v): a version recorded before the flag was set is refused,
// with the index read before the flag too. A split or sparse index is
// asked of git rather than read as empty: its committed files stay kept
// (attack26 F2).
func TestHiddenLocalChangesArePrivate(t *testing.T) {
	for _, flag := range []string{"skip-worktree", "assume-unchanged"} {
		t.Run(flag, func(t *testing.T) {
			const rules = "files:\n  - {glob: \"config/*\", schema: yaml}\n"
			e := withConfig(t, newRepo(t), rules)
			root := e.Config().Root
			git := func(args ...string) {
				t.Helper()
				if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v: %s", args, err, out)
				}
			}
			edit(t, e, "config/credentials.yml", "password: CHANGEME\n")
			edit(t, e, ".claude/settings.json", "{}\n")
			git("add", "config/credentials.yml", ".claude/settings.json")
			git("-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "-m", "templates")
			e.Forget()
			record(t, e, "config/credentials.yml")
			record(t, e, ".claude/settings.json")
			head := mustHead(t, e)
			if ps, err := e.Unpublishable(context.Background(), head, "", ""); err != nil || len(ps) > 0 {
				t.Fatalf("no flag: Unpublishable = %v, %v; want nothing", ps, err)
			}
			git("update-index", "--"+flag, "config/credentials.yml", ".claude/settings.json")
			want := config.WhyHidden(flag)
			// the index as read before the flag: git itself is asked
			ps, err := e.Unpublishable(context.Background(), head, "", "")
			if err != nil || len(ps) != 2 || !strings.Contains(ps[0].Message, "private: "+want) || !strings.Contains(ps[1].Message, "private: "+want) {
				t.Fatalf("flagged: Unpublishable = %v, %v; want both refused as private", ps, err)
			}
			e.Forget()
			for _, p := range []string{"config/credentials.yml", ".claude/settings.json"} {
				if why := e.Config().Private(p); why != want {
					t.Errorf("Private(%s) = %q, want %q", p, why, want)
				}
			}
			git("config", "--add", "strata.keepPrivate", "config/credentials.yml")
			git("config", "--add", "strata.keepPrivate", ".claude/settings.json")
			e = withConfig(t, e, rules)
			if ps, err = e.Unpublishable(context.Background(), head, "", ""); err != nil || len(ps) > 0 {
				t.Fatalf("strata.keepPrivate: Unpublishable = %v, %v; want nothing", ps, err)
			}
		})
	}
	for _, name := range []string{"split", "sparse"} {
		t.Run(name, func(t *testing.T) {
			e := withConfig(t, newRepo(t), "files:\n  - {glob: \"config/*\", schema: yaml}\n")
			root := e.Config().Root
			git := func(args ...string) {
				t.Helper()
				if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v: %s", args, err, out)
				}
			}
			edit(t, e, "config/app.yml", "a: 1\n")
			git("add", "-A")
			git("-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "-m", "app")
			if name == "split" {
				git("config", "core.splitIndex", "true")
				git("update-index", "--split-index")
			} else {
				git("sparse-checkout", "init", "--cone", "--sparse-index")
				git("sparse-checkout", "set", "config", ".claude")
			}
			e.Forget()
			if why := e.Config().Private("config/app.yml"); why != "" {
				t.Fatalf("Private(config/app.yml) = %q, want kept", why)
			}
			if note, read := e.IndexNote(); note != name+" index" || !read {
				t.Errorf("IndexNote = %q, %v; want %q, true", note, read, name+" index")
			}
		})
	}
}
