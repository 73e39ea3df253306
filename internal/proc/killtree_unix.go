//go:build unix

package proc

import (
	"os"
	"strconv"
	"syscall"
)

// KillTree kills process pid and every process descended from it that it
// can find (/proc: their parents), the descendants first frozen with
// SIGSTOP so that none forks a new one meanwhile. A process a killed
// parent left behind would be re-parented and outlive the kill: git
// cat-file's promisor `git fetch` held the caller's stderr pipe open after
// git cat-file itself was killed (attack31 F5). Where /proc cannot be read
// only pid itself is killed.
func KillTree(pid int) {
	tree := []int{pid}
	seen := map[int]bool{pid: true}
	syscall.Kill(pid, syscall.SIGSTOP)
	for round := 0; round < 8; round++ {
		added := false
		for _, child := range children(seen) {
			seen[child] = true
			tree = append(tree, child)
			syscall.Kill(child, syscall.SIGSTOP)
			added = true
		}
		if !added {
			break
		}
	}
	for i := len(tree) - 1; i >= 0; i-- {
		syscall.Kill(tree[i], syscall.SIGKILL)
	}
}

// children lists the processes whose parent is in of and that are not in
// of themselves.
func children(of map[int]bool) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || of[pid] {
			continue
		}
		if of[Parent(pid)] {
			out = append(out, pid)
		}
	}
	return out
}
