package raftfsm

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash"
	"hash/crc32"
	"io"

	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/keyspace"
)

// Snapshot captures the state. It runs on raft's FSM goroutine (no Apply
// runs meanwhile), so it clones the keyspace and lets Persist encode the
// clone while applies continue.
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	ks := f.KS()
	ks.RLock()
	defer ks.RUnlock()
	return &snapshot{ks: ks.Clone(), now: f.A.now, index: f.applied.Load(), released: f.OnSnapshotReleased}, nil
}

// Restore replaces the state with a snapshot. The snapshot is verified
// whole (checksum) before anything is replaced.
func (f *FSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	ks, now, index, err := ReadSnapshot(rc)
	if err != nil {
		return err
	}
	f.mu.Lock()
	old := f.A.KS
	old.Lock()
	f.A.KS = ks
	f.A.now = now
	old.Unlock()
	f.mu.Unlock()
	// The state now reflects the log up to index: readers waiting for an
	// index the snapshot covers (a follower catching up by snapshot
	// install) must not wait for the next entry to be applied.
	f.setApplied(index)
	if f.A.Ready != nil {
		f.A.Ready(-1, nil) // any key may have changed
	}
	return nil
}

// snapshotMagic starts every snapshot file; its last byte is the format
// version. Version 2 added the applied index after the clock; version 1
// files are still read (as index 0).
var (
	snapshotMagic   = [8]byte{'G', 'O', 'B', 'L', 'I', 'N', 'S', 2}
	snapshotMagicV1 = [8]byte{'G', 'O', 'B', 'L', 'I', 'N', 'S', 1}
)

type snapshot struct {
	ks       *keyspace.Keyspace
	now      int64
	index    uint64
	released func()
}

// Persist writes magic, clock, keyspace and a CRC-32C of all of it.
func (s *snapshot) Persist(sink raft.SnapshotSink) error {
	if err := WriteSnapshot(sink, s.ks, s.now, s.index); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s *snapshot) Release() {
	s.ks = nil
	if s.released != nil {
		s.released()
	}
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// WriteSnapshot writes the snapshot format to w: magic, the state's clock,
// the index of the last entry applied to ks, the keyspace, and a CRC-32C
// of all of it.
func WriteSnapshot(w io.Writer, ks *keyspace.Keyspace, now int64, index uint64) error {
	h := crc32.New(castagnoli)
	mw := io.MultiWriter(w, h)
	hdr := append(snapshotMagic[:], make([]byte, 0, 20)...)
	hdr = binary.AppendVarint(hdr, now)
	hdr = binary.AppendUvarint(hdr, index)
	if _, err := mw.Write(hdr); err != nil {
		return err
	}
	if err := ks.Encode(mw); err != nil {
		return err
	}
	var sum [4]byte
	binary.LittleEndian.PutUint32(sum[:], h.Sum32())
	_, err := w.Write(sum[:])
	return err
}

// ReadSnapshot reads a snapshot written by WriteSnapshot, verifying it,
// and returns the keyspace, its clock and its applied index.
func ReadSnapshot(r io.Reader) (ks *keyspace.Keyspace, now int64, index uint64, err error) {
	cr := &crcReader{r: r, h: crc32.New(castagnoli)}
	br := bufio.NewReaderSize(cr, 1<<16)
	var magic [8]byte
	if _, err := io.ReadFull(br, magic[:]); err != nil || (magic != snapshotMagic && magic != snapshotMagicV1) {
		return nil, 0, 0, fmt.Errorf("raftfsm: not a goblin snapshot")
	}
	if now, err = binary.ReadVarint(br); err != nil {
		return nil, 0, 0, ErrCorrupt
	}
	if magic == snapshotMagic {
		if index, err = binary.ReadUvarint(br); err != nil {
			return nil, 0, 0, ErrCorrupt
		}
	}
	if ks, err = keyspace.Decode(br); err != nil {
		return nil, 0, 0, err
	}
	// All that is left must be the 4-byte checksum, which crcReader kept
	// out of the hash.
	if rest, err := io.ReadAll(br); err != nil || len(rest) != 4 || cr.n != 4 {
		return nil, 0, 0, fmt.Errorf("%w: trailing data or missing checksum", ErrCorrupt)
	}
	if binary.LittleEndian.Uint32(cr.tail[:]) != cr.h.Sum32() {
		return nil, 0, 0, fmt.Errorf("%w: snapshot checksum mismatch", ErrCorrupt)
	}
	return ks, now, index, nil
}

// crcReader hashes everything it reads except the last 4 bytes of the
// stream, which it keeps in tail: the checksum trailer.
type crcReader struct {
	r    io.Reader
	h    hash.Hash32
	tail [4]byte
	n    int // bytes held in tail
}

func (c *crcReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	if b := p[:k]; len(b) >= 4 {
		c.h.Write(c.tail[:c.n])
		c.h.Write(b[:len(b)-4])
		copy(c.tail[:], b[len(b)-4:])
		c.n = 4
		return k, err
	}
	for _, b := range p[:k] {
		if c.n == 4 {
			c.h.Write(c.tail[:1])
			copy(c.tail[:], c.tail[1:])
			c.n = 3
		}
		c.tail[c.n] = b
		c.n++
	}
	return k, err
}
