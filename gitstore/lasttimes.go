package gitstore

import (
	"time"
)

// LastTimes returns, for each of paths that ref's trailers name, the time of
// the newest commit of ref's first-parent chain that recorded it (a change
// or a deletion): what Log(ref, LogQuery{Path: p, Limit: 1}) gives for each
// p, in one walk of the time index that stops as soon as every path has its
// time. A missing ref gives an empty map.
func (s *Store) LastTimes(ref string, paths []string) (map[string]time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]time.Time, len(paths))
	if len(paths) == 0 {
		return out, nil
	}
	ix, err := s.index(ref)
	if err != nil {
		return nil, logErr(err)
	}
	want := make(map[string]uint64, len(paths)) // path -> its bloom bits, until found
	for _, p := range paths {
		want[p] = bloomBits(p)
	}
	for i := len(ix.recs) - 1; i >= 0 && len(want) > 0; i-- {
		r := ix.recs[i]
		if !mayName(r.bloom, want) {
			continue
		}
		ci, err := s.readCommit(r.hash)
		if err != nil {
			return nil, logErr(damaged(ref, ix.last(), r.hash, err))
		}
		when := commitTime(ci)
		for _, e := range parseTrailers(ci.message) {
			if _, ok := want[e.Path]; ok {
				out[e.Path] = when
				delete(want, e.Path)
			}
		}
	}
	return out, nil
}

// mayName reports whether a commit whose paths' filter is bloom may record
// one of want. With many paths left nearly every filter matches one of them,
// so the commit is read without asking.
func mayName(bloom uint64, want map[string]uint64) bool {
	if len(want) > 64 {
		return true
	}
	for _, b := range want {
		if bloom&b == b {
			return true
		}
	}
	return false
}
