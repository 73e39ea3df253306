package gitperm

import (
	"io/fs"
	"testing"
)

// TestMode checks Parse and Mode against the modes git 2.39 gives (setup.c
// git_config_perm, path.c calc_shared_perm and adjust_shared_perm), for a
// file, an object and a directory as created under umask 022 and 077.
func TestMode(t *testing.T) {
	const d = fs.ModeDir
	const g = fs.ModeSetgid
	for _, c := range []struct {
		value             string
		file, obj, dir    fs.FileMode // created under umask 022: 0644, 0444, 0755
		file7, obj7, dir7 fs.FileMode // under umask 077: 0600, 0400, 0700
	}{
		{"umask", 0o644, 0o444, d | 0o755, 0o600, 0o400, d | 0o700},
		{"false", 0o644, 0o444, d | 0o755, 0o600, 0o400, d | 0o700},
		{"0", 0o644, 0o444, d | 0o755, 0o600, 0o400, d | 0o700},
		{"", 0o644, 0o444, d | 0o755, 0o600, 0o400, d | 0o700},
		{"group", 0o664, 0o444, d | g | 0o775, 0o660, 0o440, d | g | 0o770},
		{"true", 0o664, 0o444, d | g | 0o775, 0o660, 0o440, d | g | 0o770},
		{"1", 0o664, 0o444, d | g | 0o775, 0o660, 0o440, d | g | 0o770},
		{"everybody", 0o664, 0o444, d | g | 0o775, 0o664, 0o444, d | g | 0o775},
		{"world", 0o664, 0o444, d | g | 0o775, 0o664, 0o444, d | g | 0o775},
		{"all", 0o664, 0o444, d | g | 0o775, 0o664, 0o444, d | g | 0o775},
		{"2", 0o664, 0o444, d | g | 0o775, 0o664, 0o444, d | g | 0o775},
		{"0660", 0o660, 0o440, d | g | 0o770, 0o660, 0o440, d | g | 0o770},
		{"0640", 0o640, 0o440, d | g | 0o750, 0o640, 0o440, d | g | 0o750},
		{"0600", 0o600, 0o400, d | 0o700, 0o600, 0o400, d | 0o700},
		{"0666", 0o666, 0o444, d | g | 0o777, 0o666, 0o444, d | g | 0o777},
	} {
		s, err := Parse(c.value, true)
		if err != nil {
			t.Fatalf("%q: %v", c.value, err)
		}
		for _, m := range []struct{ created, want fs.FileMode }{
			{0o644, c.file}, {0o444, c.obj}, {d | 0o755, c.dir},
			{0o600, c.file7}, {0o400, c.obj7}, {d | 0o700, c.dir7},
		} {
			if got := s.Mode(m.created); got != m.want {
				t.Errorf("%q: created %v: got %v, want %v", c.value, m.created, got, m.want)
			}
		}
	}
	if s, err := Parse("", false); err != nil || s != Group {
		t.Errorf("the key alone: %v %v, want group", s, err)
	}
	for _, bad := range []string{"0400", "0060", "Group", "sometimes"} {
		if _, err := Parse(bad, true); err == nil {
			t.Errorf("%q: no error; git refuses it", bad)
		}
	}
}
