package gitstore

// OpenHome opens dir's repository, as Open does, for the history of the
// files strata keeps outside the work tree (Claude Code's auto-memory file
// in the home directory). Its StateRef and RejectedRef are
// refs/strata/home/state and refs/strata/home/rejected (in a linked
// worktree refs/strata/worktrees/<name>/home/state and .../home/rejected):
// local refs that Fetch and Push never name, so what is recorded there never
// leaves the machine with a sync. o are as for OpenWith.
func OpenHome(dir string, o Options) (*Store, error) {
	s, err := OpenWith(dir, o)
	if err != nil {
		return nil, err
	}
	s.prefix = "home/"
	return s, nil
}

// HomeFile is the one file a home history holds: the auto-memory file,
// under its name in the home ref's tree (engine.HomeName).
const HomeFile = "memory/MEMORY.md"

// foreignHomePath says why a path a fetched home history holds is refused:
// a home ref holds the auto-memory file only, so any other path is what a
// hostile remote put there (never written to disk, but kept on the local
// home ref, pushed back at each sync and listed by log: attack35d L2).
// "" for the home file, and for every path of a store that is not a home
// store.
func (s *Store) foreignHomePath(path string) string {
	if s.prefix != "home/" || path == HomeFile {
		return ""
	}
	return "a home history holds only " + HomeFile + " (the auto-memory file)"
}
