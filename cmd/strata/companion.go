package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/strata-dev/strata/internal/buildinfo"
)

// companion is the program that holds strata's servers (cmd/strata-serve):
// `strata mcp` and `strata timeline --serve` check their arguments and the
// repository, then become it, so strata itself links neither the MCP SDK
// nor net/http and every other call (a hook's included) starts faster.
const companion = "strata-serve"

// findCompanion is strata-serve next to this strata (both come from one
// make install), else the first on PATH.
func findCompanion() (string, error) {
	if self, err := os.Executable(); err == nil {
		if self, err := filepath.EvalSymlinks(self); err == nil {
			p := filepath.Join(filepath.Dir(self), companion)
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
				return p, nil
			}
		}
	}
	if p, err := exec.LookPath(companion); err == nil {
		return p, nil
	}
	return "", errors.New(companion + " is missing: strata's MCP and timeline servers are in it; " +
		"install it next to strata or on PATH (make install, or go install ./cmd/strata ./cmd/strata-serve)")
}

// serveWith replaces this process with strata-serve running server with
// args. It returns only on failure. Commands run in-process (tests that call
// run) cannot be replaced: e.exec is nil there.
func serveWith(e *env, server string, args ...string) error {
	if e.exec == nil {
		return fmt.Errorf("%s: %s cannot run inside another program", server, companion)
	}
	path, err := findCompanion()
	if err != nil {
		return err
	}
	// the companion refuses to run for a strata built from another source
	// (one found on PATH, older than this strata)
	if rev := buildinfo.ID(buildVersion); rev != "" {
		args = append(args, "-build", rev)
	}
	return e.exec(path, append([]string{companion, server}, args...))
}
