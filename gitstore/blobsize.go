package gitstore

import (
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/strata-dev/strata/gitstore/internal/odb"
	"github.com/strata-dev/strata/state"
)

// TooLargeError is ReadBlobLimit's refusal of a blob over the limit. It is
// decided from the blob's object header: nothing of the content was read.
type TooLargeError struct {
	Blob  string // the blob id
	Size  int64  // its size in bytes
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("blob %s is %d bytes, larger than the limit of %d", e.Blob, e.Size, e.Limit)
}

// Is makes a *TooLargeError match state.ErrTooLarge.
func (e *TooLargeError) Is(target error) bool { return target == state.ErrTooLarge }

// BlobSize returns the size of blob id from its object header (a loose
// object's zlib header, a pack entry's header, a delta's result size)
// without reading its content. It returns an error wrapping
// state.ErrNotFound when the object does not exist or is not a blob.
func (s *Store) BlobSize(id string) (int64, error) {
	h, err := blobHash(id)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	size, err := s.blobSize(h)
	if err != nil {
		return 0, fmt.Errorf("blob %s: %w", id, err)
	}
	return size, nil
}

// ReadBlobLimit returns the content of blob id when it is at most limit
// bytes long. A larger blob is refused with a *TooLargeError that names its
// size, decided from the object's header before anything of the content is
// read. It returns an error wrapping state.ErrNotFound when the object does
// not exist or is not a blob.
func (s *Store) ReadBlobLimit(id string, limit int64) ([]byte, error) {
	h, err := blobHash(id)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.readBlobLimit(h, limit)
}

// readBlobLimit is ReadBlobLimit for a hash. Callers hold s.mu.
func (s *Store) readBlobLimit(h plumbing.Hash, limit int64) ([]byte, error) {
	// odb reads the headers first and refuses an object over the limit
	// before inflating it, so one read serves (a Stat first would walk a
	// delta chain's headers twice).
	t, data, err := s.objects.ReadLimit(h, limit)
	if s.fetched(h, err) {
		t, data, err = s.objects.ReadLimit(h, limit)
	}
	var tl *odb.TooLargeError
	switch {
	case errors.As(err, &tl):
		return nil, &TooLargeError{Blob: h.String(), Size: tl.Size, Limit: limit}
	case err != nil:
		return nil, fmt.Errorf("blob %s: %w", h, s.objectErr(err))
	case t != plumbing.BlobObject:
		return nil, fmt.Errorf("blob %s: not a blob: %w", h, state.ErrNotFound)
	}
	return data, nil
}

func blobHash(id string) (plumbing.Hash, error) {
	if !plumbing.IsHash(id) {
		return plumbing.ZeroHash, fmt.Errorf("blob %q: %w", id, state.ErrNotFound)
	}
	return plumbing.NewHash(id), nil
}

// blobSize returns the size of blob h from its header. Callers hold s.mu.
func (s *Store) blobSize(h plumbing.Hash) (int64, error) {
	t, size, err := s.objects.Stat(h)
	if s.fetched(h, err) {
		t, size, err = s.objects.Stat(h)
	}
	if err != nil {
		return 0, s.objectErr(err)
	}
	if t != plumbing.BlobObject {
		return 0, fmt.Errorf("not a blob: %w", state.ErrNotFound)
	}
	return size, nil
}

// HasBlob reports whether the object store (its packs and alternates
// included) holds blob id. It never asks a partial clone's promisor remote:
// the answer is about this repository's objects only.
func (s *Store) HasBlob(id string) bool {
	h, err := blobHash(id)
	if err != nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, _, err := s.objects.Stat(h)
	return err == nil && t == plumbing.BlobObject
}

// WriteBlob stores content as a blob, fsynced, and returns its id. It is
// idempotent: a blob already stored is not written again.
func (s *Store) WriteBlob(content []byte) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, err := s.writeObject(plumbing.BlobObject, content)
	if err != nil {
		return "", err
	}
	return h.String(), nil
}
