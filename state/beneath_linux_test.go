package state

// noOpenat2Set sets noOpenat2 and returns what it was (for tests).
func noOpenat2Set(v bool) bool { return noOpenat2.Swap(v) }
