package gitstore

import "github.com/go-git/go-git/v5/plumbing"

// BlobHash is the id git gives a blob with this content (what Files
// returns), so callers can tell unchanged content without writing it.
func BlobHash(content []byte) string {
	return plumbing.ComputeHash(plumbing.BlobObject, content).String()
}
