//go:build !unix

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// execProcess runs path with strata's streams and ends with its exit code,
// where a process cannot replace itself.
func execProcess(path string, argv []string) error {
	cmd := exec.Command(path, argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		os.Exit(ee.ExitCode())
	}
	if err != nil {
		return fmt.Errorf("run %s: %w", path, err)
	}
	os.Exit(0)
	return nil
}

// detach: nothing to do where there are no process groups.
func detach(*exec.Cmd) {}
