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
