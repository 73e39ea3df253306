//go:build !unix

package proc

import "os"

// KillTree kills process pid (its descendants are not found here).
func KillTree(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}
