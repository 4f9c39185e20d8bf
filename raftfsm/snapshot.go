package raftfsm

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"

	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/acl"
	"github.com/goblindb/goblin/keyspace"
)

// Snapshot captures the state. It runs on raft's FSM goroutine (no Apply
// runs meanwhile) and takes a view of the keyspace (keyspace.View), which
// copies no member: the sets share their leaves with it copy-on-write.
// Persist encodes the view while applies continue.
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	st := f.Capture()
	// Raft calls it on its FSM goroutine, the only one that changes the
	// kept pieces: a node restoring the snapshot needs them when the rest
	// of their entries come (chunk.go).
	st.chunks = f.keptChunks()
	return &snapshot{st: st, released: f.OnSnapshotReleased}, nil
}

// Restore replaces the state with a snapshot. The snapshot is verified
// whole (checksum) before anything is replaced.
func (f *FSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	st, err := ReadSnapshot(rc)
	if err != nil {
		return err
	}
	f.mu.Lock()
	old := f.applier.KS
	old.Lock()
	f.applier.KS = st.KS
	f.applier.now = st.Now
	f.applier.setACL(st.acl, vanished(f.applier.acl.users, st.acl.users))
	f.applied.Store(st.Index) // before the new state is visible (Capture)
	f.setChunks(st.chunks)
	old.Unlock()
	f.mu.Unlock()
	// The state now reflects the log up to index: readers waiting for an
	// index the snapshot covers (a follower catching up by snapshot
	// install) must not wait for the next entry to be applied.
	f.setApplied(st.Index)
	f.restored()
	if f.applier.Ready != nil {
		f.applier.Ready(-1, nil) // any key may have changed
	}
	return nil
}

// State is what a snapshot holds: the keyspace, the state's clock, the
// index of the last entry applied to it, and the ACL users. A state read
// from a file or built by a caller has KS; one captured from a running
// FSM (Capture) has a view of its keyspace instead, and KS nil.
type State struct {
	KS    *keyspace.Keyspace
	Now   int64
	Index uint64
	acl   aclState
	view  *keyspace.View
	// chunks are the pieces of split entries kept at Index (a Raft
	// snapshot's only; written as format 4, chunk.go).
	chunks map[uint64]*chunkBuf
}

// View returns the state's keyspace as a view: the captured one, or a
// view of KS as it is now.
func (s *State) View() *keyspace.View {
	if s.view != nil {
		return s.view
	}
	return s.KS.Snapshot()
}

// ACLUsers returns the state's ACL users (nil: none yet).
func (s *State) ACLUsers() *acl.Users { return s.acl.users }

// snapshotMagic starts every snapshot file; its last byte is the format
// version. Version 3 added the ACL section after the keyspace, version 2
// the applied index after the clock. Older files are still read: version
// 2 as a state without users (each node enforces its own configuration,
// as before ACLs were replicated), version 1 also as index 0.
var (
	snapshotMagic   = [8]byte{'G', 'O', 'B', 'L', 'I', 'N', 'S', 3}
	snapshotMagicV4 = [8]byte{'G', 'O', 'B', 'L', 'I', 'N', 'S', 4}
	snapshotMagicV2 = [8]byte{'G', 'O', 'B', 'L', 'I', 'N', 'S', 2}
	snapshotMagicV1 = [8]byte{'G', 'O', 'B', 'L', 'I', 'N', 'S', 1}
)

var errNotSnapshot = errors.New("raftfsm: not a goblin snapshot")

// knownMagic reports whether magic starts a snapshot of a version this
// build reads.
func knownMagic(magic [8]byte) bool {
	return magic == snapshotMagic || magic == snapshotMagicV4 || magic == snapshotMagicV2 || magic == snapshotMagicV1
}

type snapshot struct {
	st       *State
	released func()
}

// Persist writes the snapshot format (WriteSnapshot) to the sink.
func (s *snapshot) Persist(sink raft.SnapshotSink) error {
	if err := WriteSnapshot(sink, s.st); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s *snapshot) Release() {
	s.st = nil
	if s.released != nil {
		s.released()
	}
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// WriteSnapshot writes the snapshot format to w: magic, the state's clock,
// the index of the last entry applied, the keyspace, the ACL section
// (aclsnapshot.go), and a CRC-32C of all of it.
func WriteSnapshot(w io.Writer, st *State) error {
	h := crc32.New(castagnoli)
	mw := io.MultiWriter(w, h)
	magic := snapshotMagic
	if len(st.chunks) > 0 {
		magic = snapshotMagicV4 // older builds read the others
	}
	hdr := append(magic[:], make([]byte, 0, 20)...)
	hdr = binary.AppendVarint(hdr, st.Now)
	hdr = binary.AppendUvarint(hdr, st.Index)
	if _, err := mw.Write(hdr); err != nil {
		return err
	}
	if err := st.View().Encode(mw); err != nil {
		return err
	}
	if _, err := mw.Write(st.acl.encode(nil)); err != nil {
		return err
	}
	if len(st.chunks) > 0 {
		if _, err := mw.Write(appendChunks(nil, st.chunks)); err != nil {
			return err
		}
	}
	var sum [4]byte
	binary.LittleEndian.PutUint32(sum[:], h.Sum32())
	_, err := w.Write(sum[:])
	return err
}

// ReadSnapshot reads a snapshot written by WriteSnapshot (or an older
// version), verifying it.
func ReadSnapshot(r io.Reader) (*State, error) {
	cr := &crcReader{r: r, h: crc32.New(castagnoli)}
	br := bufio.NewReaderSize(cr, 1<<16)
	var magic [8]byte
	if _, err := io.ReadFull(br, magic[:]); err != nil || !knownMagic(magic) {
		return nil, errNotSnapshot
	}
	st := &State{}
	var err error
	if st.Now, err = binary.ReadVarint(br); err != nil {
		return nil, ErrCorrupt
	}
	if magic != snapshotMagicV1 {
		if st.Index, err = binary.ReadUvarint(br); err != nil {
			return nil, ErrCorrupt
		}
	}
	if st.KS, err = keyspace.Decode(br); err != nil {
		return nil, err
	}
	if magic == snapshotMagic || magic == snapshotMagicV4 {
		if st.acl, err = readACLSection(br); err != nil {
			return nil, err
		}
	}
	if magic == snapshotMagicV4 {
		if st.chunks, err = readChunks(br); err != nil {
			return nil, err
		}
	}
	// All that is left must be the 4-byte checksum, which crcReader kept
	// out of the hash.
	if rest, err := io.ReadAll(br); err != nil || len(rest) != 4 || cr.n != 4 {
		return nil, fmt.Errorf("%w: trailing data or missing checksum", ErrCorrupt)
	}
	if binary.LittleEndian.Uint32(cr.tail[:]) != cr.h.Sum32() {
		return nil, fmt.Errorf("%w: snapshot checksum mismatch", ErrCorrupt)
	}
	return st, nil
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

// PeekIndex returns the applied index a snapshot's state records in its
// header, without consuming anything from br; ok is false for a version 1
// snapshot, which records none. It lets the snapshot store check the index
// its metadata gives (meta.json carries no checksum of its own) before the
// state is read.
func PeekIndex(br *bufio.Reader) (index uint64, ok bool, err error) {
	hdr, err := br.Peek(8 + 2*binary.MaxVarintLen64)
	if len(hdr) < 8 {
		if err == nil || err == io.EOF {
			err = fmt.Errorf("%w: snapshot too short", ErrCorrupt)
		}
		return 0, false, err
	}
	switch magic := [8]byte(hdr[:8]); {
	case !knownMagic(magic):
		return 0, false, errNotSnapshot
	case magic == snapshotMagicV1:
		return 0, false, nil
	}
	_, n := binary.Varint(hdr[8:])
	if n <= 0 {
		return 0, false, ErrCorrupt
	}
	index, m := binary.Uvarint(hdr[8+n:])
	if m <= 0 {
		return 0, false, ErrCorrupt
	}
	return index, true, nil
}
