package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// CheckFilter asks git itself which of the repo-relative paths it passes
// through a filter driver (their filter attribute): one `git check-attr -z
// --stdin filter` in the work tree, so every source of attributes counts as
// git counts it (a .gitattributes only in the index, core.attributesFile
// set through `-c` or an include git follows and strata does not). It
// returns each filtered path's driver name. Attributes answers the same
// question in-process; sync asks git before it publishes anything
// (engine.Unpublishable).
//
// A path with a symbolic link among its folders is asked about under its
// name and also where it really is, when that is in the work tree (".claude
// -> vault" with vault/** filter=crypt: git filters the file under the name
// it can commit it by). A store with no work tree filters nothing. It
// returns an error only when git cannot be run, fails, or answers out of
// turn.
func (s *Store) CheckFilter(ctx context.Context, paths []string) (map[string]string, error) {
	out := map[string]string{}
	if s.root == "" || len(paths) == 0 {
		return out, nil
	}
	if _, err := exec.LookPath("git"); err != nil {
		return nil, errors.New("sync needs the git binary on PATH")
	}
	names, asked := s.askedNames(paths)
	if len(names) == 0 {
		return out, nil
	}
	var in bytes.Buffer
	for _, name := range names {
		in.WriteString(name)
		in.WriteByte(0)
	}
	ctx, cancel := askDeadline(ctx)
	defer cancel()
	cmd := s.gitCmd(exec.CommandContext(ctx, "git", "check-attr", "-z", "--stdin", "filter"))
	cmd.Stdin = &in
	boundWait(cmd)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		return nil, askFailed(ctx, "check-attr", stderr.String(), err)
	}
	// One "PATH\0filter\0VALUE\0" per path asked, in turn.
	fields := strings.Split(strings.TrimSuffix(stdout.String(), "\x00"), "\x00")
	if len(fields) != 3*len(names) {
		return nil, fmt.Errorf("git check-attr: %d answers for %d paths", len(fields)/3, len(names))
	}
	for i, name := range names {
		if got := fields[3*i]; got != name {
			return nil, fmt.Errorf("git check-attr: answered %q when asked %q", got, name)
		}
		switch v := fields[3*i+2]; v {
		case "unspecified", "unset", "set", "":
		default:
			for _, p := range asked[name] {
				out[p] = v
			}
		}
	}
	return out, nil
}

// askedNames is what CheckFilter and CheckTracked ask git about: each
// path under its name and, when a folder of it is a symbolic link, also
// where it really is, when that is in the work tree. names holds each name
// once, in the order first asked; asked maps it to the paths it answers
// for. Empty paths and paths with a NUL are left out.
func (s *Store) askedNames(paths []string) (names []string, asked map[string][]string) {
	asked = map[string][]string{}
	ask := func(name, p string) {
		if _, dup := asked[name]; !dup {
			names = append(names, name)
		}
		asked[name] = append(asked[name], p)
	}
	linked := map[string]bool{}
	var realRoot string
	for _, p := range paths {
		if p == "" || strings.ContainsRune(p, 0) {
			continue
		}
		ask(p, p)
		if s.beyondSymlink(p, linked) {
			if realRoot == "" {
				realRoot, _ = filepath.EvalSymlinks(s.root)
			}
			if real, ok := s.realRel(realRoot, p); ok {
				ask(real, p)
			}
		}
	}
	return names, asked
}
