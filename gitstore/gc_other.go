//go:build !unix

package gitstore

import "os/exec"

func detach(cmd *exec.Cmd) {}
