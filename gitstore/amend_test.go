package gitstore

import (
	"strings"
	"testing"
)

func TestCommitAmends(t *testing.T) {
	for line, want := range map[string]bool{
		"git commit --amend":                           true,
		"git commit -q --amend --no-edit":              true,
		"git commit --am -m x":                         true,
		"/usr/lib/git-core/git commit --amend -q -m e": true,
		"git -c x.y=1 -C /r commit --amend":            true,
		"git --git-dir /r/.git commit --amend":         true,
		"git commit":                                   false,
		"git commit -m --amend":                        false,
		"git commit -am --amend":                       false,
		"git commit --message --amend":                 false,
		"git commit --mess --amend":                    false, // --mess is --message (attack19 verify N3)
		"git commit --me --amend":                      false,
		"git commit --reu HEAD --amend":                true, // --reuse-message HEAD, then --amend
		"git commit --message=x --amend":               true,
		"git commit -- --amend":                        false,
		"git commit --a":                               false, // ambiguous for git: not an amend
		"git commit --fixup=amend:HEAD":                false,
		"git -c commit --amend":                        false, // "commit" is -c's value; the command is --amend's... none
		"git am --amend":                               false,
		"git merge --amend":                            false,
		"git":                                          false,
		"git -C":                                       false,
	} {
		if got := commitAmends(strings.Fields(line)); got != want {
			t.Errorf("commitAmends(%q) = %v, want %v", line, got, want)
		}
	}
}
