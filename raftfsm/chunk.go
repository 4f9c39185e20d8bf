package raftfsm

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
)

// A chunk is one piece of a data entry (a command, a pipeline's batch, a
// transaction) too large for one log entry in a cluster: hashicorp/raft's
// transport decodes an entry's bytes in steps that copy what came before,
// so a follower's time to take an entry grows with the square of its
// size, and a cluster keeps each log entry within MaxClusterEntryBytes
// (node/write.go). The proposer splits the encoded entry into pieces and
// proposes each as an OpChunk entry of its own, in order:
//
//	[VersionProposal u8][OpChunk u8][term u64][proposal u64]
//	[of u64][seq uvarint][last u8][time varint][piece: the rest]
//
// Of names the whole entry (the proposer's ID for it, the same in every
// piece), Seq numbers the pieces from 0, Last marks the final one, and
// time is the leader's clock when it proposed the piece (Entry.Time, set
// again by a leader proposing a follower's piece): the whole entry is
// applied with its last piece's time, whatever clock its own bytes carry. Each
// piece has its own proposal header, term fence and result. The state
// machine keeps the pieces of an entry until its last one arrives, then
// applies the whole entry at that piece's index and term, as if it had
// been one log entry, and answers with its result; the other pieces
// answer nothing. The write so takes effect at once, or not at all:
//
//   - a piece that does not follow the pieces kept for its entry (a
//     piece lost to a leadership change, a piece proposed again in a
//     later term) drops them and answers ErrChunkBroken, and so does
//     every later piece of that entry; nothing of it is applied;
//   - the pieces kept are dropped when an entry of a later term is
//     applied (their entry's remaining pieces, fenced to the earlier
//     term, can no longer take effect), when the state's clock (the
//     leader's, recorded in the entries) passed chunkMaxMillis since the
//     first piece's time, or chunkMaxAge log entries since its index: a
//     proposer that stopped half way (it failed, or a piece was refused)
//     leaves them behind;
//   - a piece that would keep more than chunkMaxBytes of pieces in all
//     breaks its entry;
//   - a Raft snapshot holds the pieces kept (format 4, written only
//     then), so a node restoring it has them when the rest comes.
//
// Every node decides all of this from the log alone, so every node keeps
// and drops the same pieces. The whole entry is checked as the leader
// checks a client's entry (Validate), and must be a data entry (a
// command, a batch, a transaction), before it is applied; one that fails
// is recorded as failed.

// Chunk is an OpChunk entry's payload.
type Chunk struct {
	Of    uint64
	Seq   uint32
	Last  bool
	Piece []byte
}

// ChunkOverhead bounds the bytes an OpChunk entry adds to its piece.
const ChunkOverhead = 2 + proposalHeader + 8 + binary.MaxVarintLen32 + 1

// ChunkMinVersion is the entry version a server must apply (its gossiped
// Member.Entries) before chunks are written: a build without them would
// record them as failed entries while the others apply them.
const ChunkMinVersion = 4

// If an entry's last piece never comes, its pieces are kept until the
// state's clock passed chunkMaxMillis since its first piece's time, or
// chunkMaxAge log entries were applied after it. chunkMaxBytes bounds
// the pieces kept in all (a node's largest entry, wal.MaxEntryData, is
// just under 1 GiB).
const (
	chunkMaxMillis = 60_000
	chunkMaxAge    = 1 << 20
)

var chunkMaxBytes = 1 << 30 // a variable for tests

var (
	// ErrChunkBroken is the result of a piece that does not follow the
	// pieces kept for its entry: nothing of the entry was applied.
	ErrChunkBroken = errors.New("raftfsm: a piece of a split entry is missing: nothing of it was applied")
)

// SplitEntry returns the OpChunk entries that carry data, the encoded
// entry of, in pieces of at most piece bytes, without proposal headers
// (the proposer sets them as it proposes each).
func SplitEntry(data []byte, of uint64, piece int) []*Entry {
	var out []*Entry
	for seq := 0; len(data) > 0 || seq == 0; seq++ {
		n := min(piece, len(data))
		out = append(out, &Entry{Op: OpChunk, Chunk: &Chunk{Of: of, Seq: uint32(seq), Last: n == len(data), Piece: data[:n:n]}})
		data = data[n:]
	}
	return out
}

func (c *Chunk) encode(dst []byte, time int64) []byte {
	if c == nil {
		c = &Chunk{}
	}
	dst = binary.BigEndian.AppendUint64(dst, c.Of)
	dst = binary.AppendUvarint(dst, uint64(c.Seq))
	last := byte(0)
	if c.Last {
		last = 1
	}
	dst = append(dst, last)
	dst = binary.AppendVarint(dst, time)
	return append(dst, c.Piece...)
}

func decodeChunk(d *decoder, e *Entry) *Chunk {
	c := &Chunk{Of: d.uint64()}
	seq := d.uvarint()
	if seq > 1<<32-1 {
		d.fail()
	}
	c.Seq = uint32(seq)
	switch d.byte() {
	case 0:
	case 1:
		c.Last = true
	default:
		d.fail()
	}
	e.Time = d.varint()
	c.Piece, d.b = d.b, nil
	return c
}

// chunkBuf is what is kept of an entry's pieces.
type chunkBuf struct {
	term, first uint64 // the pieces' term, the first piece's index
	time        int64  // the first piece's time
	next        uint32 // the Seq the next piece must have
	data        []byte
}

// validateChunk checks a piece as the leader checks a client's entry
// (Validate): the whole entry is checked when its last piece is applied.
func validateChunk(e *Entry) error {
	if e.Chunk == nil || e.Proto != 0 || len(e.Commands) != 0 || len(e.Watched) != 0 || len(e.Expired) != 0 || len(e.Rules) != 0 || e.ACL != nil {
		return fmt.Errorf("%w: a malformed chunk", ErrInvalidEntry)
	}
	return nil
}

// applyChunk keeps c, a piece applied at index in term (its fence
// checked) with the clock now, or applies its whole entry with the last
// piece.
func (f *FSM) applyChunk(index, term uint64, c *Chunk, now int64) Result {
	b := f.chunks[c.Of]
	switch {
	case c.Seq == 0:
		f.dropChunk(c.Of)
		b = &chunkBuf{term: term, first: index, time: now}
		if f.chunks == nil {
			f.chunks = map[uint64]*chunkBuf{}
		}
		f.chunks[c.Of] = b
	case b == nil || b.term != term || b.next != c.Seq:
		f.dropChunk(c.Of)
		return Result{Index: index, Err: ErrChunkBroken}
	}
	if f.chunkBytes+len(c.Piece) > chunkMaxBytes {
		f.dropChunk(c.Of)
		return Result{Index: index, Err: ErrChunkBroken}
	}
	b.data = append(b.data, c.Piece...)
	f.chunkBytes += len(c.Piece)
	b.next++
	if !c.Last {
		return Result{Index: index}
	}
	f.dropChunk(c.Of)
	var whole Entry
	if err := DecodeInto(&whole, b.data); err != nil {
		return f.failChunked(index, term, err)
	}
	if err := Validate(&whole); err != nil || (whole.Op != OpCommand && whole.Op != OpBatch && whole.Op != OpMulti) {
		if err == nil {
			err = fmt.Errorf("%w: %v", ErrInvalidEntry, whole.Op)
		}
		return f.failChunked(index, term, err)
	}
	// The pieces' fences stand for the whole entry's: its own header, set
	// before it was split, is not checked. Its clock is the last piece's.
	whole.Term, whole.Proposal, whole.Time = 0, 0, now
	return f.applyFenced(index, term, &whole)
}

// failChunked records a whole entry that cannot be applied as failed.
func (f *FSM) failChunked(index, term uint64, cause error) Result {
	f.failed.Add(1)
	if f.Logger != nil {
		f.Logger.Error("log entry failed: a split entry cannot be applied, and changes nothing",
			"index", index, "term", term, "error", cause)
	}
	return Result{Index: index, Err: fmt.Errorf("%w (index %d): %w", ErrEntryFailed, index, cause)}
}

// keptChunks returns a copy of the pieces kept, for a snapshot: the
// bytes are shared (appending never changes what a buffer holds).
func (f *FSM) keptChunks() map[uint64]*chunkBuf {
	if len(f.chunks) == 0 {
		return nil
	}
	out := make(map[uint64]*chunkBuf, len(f.chunks))
	for of, b := range f.chunks {
		c := *b
		c.data = b.data[:len(b.data):len(b.data)]
		out[of] = &c
	}
	return out
}

// setChunks replaces the pieces kept (a snapshot restored).
func (f *FSM) setChunks(kept map[uint64]*chunkBuf) {
	f.chunks, f.chunkBytes = kept, 0
	for _, b := range kept {
		f.chunkBytes += len(b.data)
	}
}

// appendChunks appends the snapshot section of the pieces kept, in
// order of their entry's ID:
//
//	[count uvarint]{[of u64][term uvarint][first uvarint][time varint][next uvarint][len uvarint][data]}*count
func appendChunks(dst []byte, kept map[uint64]*chunkBuf) []byte {
	ids := make([]uint64, 0, len(kept))
	for of := range kept {
		ids = append(ids, of)
	}
	slices.Sort(ids)
	dst = binary.AppendUvarint(dst, uint64(len(ids)))
	for _, of := range ids {
		b := kept[of]
		dst = binary.BigEndian.AppendUint64(dst, of)
		dst = binary.AppendUvarint(dst, b.term)
		dst = binary.AppendUvarint(dst, b.first)
		dst = binary.AppendVarint(dst, b.time)
		dst = binary.AppendUvarint(dst, uint64(b.next))
		dst = binary.AppendUvarint(dst, uint64(len(b.data)))
		dst = append(dst, b.data...)
	}
	return dst
}

// readChunks reads the section appendChunks writes.
func readChunks(r *bufio.Reader) (map[uint64]*chunkBuf, error) {
	bad := fmt.Errorf("%w: the snapshot's kept pieces", ErrCorrupt)
	n, err := binary.ReadUvarint(r)
	if err != nil || n == 0 || n > 1<<20 {
		return nil, bad
	}
	kept := make(map[uint64]*chunkBuf, n)
	total := 0
	for range n {
		var of [8]byte
		if _, err := io.ReadFull(r, of[:]); err != nil {
			return nil, bad
		}
		b := &chunkBuf{}
		var next, size uint64
		var errs [5]error
		b.term, errs[0] = binary.ReadUvarint(r)
		b.first, errs[1] = binary.ReadUvarint(r)
		b.time, errs[2] = binary.ReadVarint(r)
		next, errs[3] = binary.ReadUvarint(r)
		size, errs[4] = binary.ReadUvarint(r)
		if errors.Join(errs[:]...) != nil || next == 0 || next > 1<<32-1 || size > uint64(chunkMaxBytes-total) {
			return nil, bad
		}
		b.next = uint32(next)
		b.data = make([]byte, size)
		if _, err := io.ReadFull(r, b.data); err != nil {
			return nil, bad
		}
		total += int(size)
		kept[binary.BigEndian.Uint64(of[:])] = b
	}
	return kept, nil
}

// dropChunk forgets the pieces kept for the entry of.
func (f *FSM) dropChunk(of uint64) {
	if b := f.chunks[of]; b != nil {
		f.chunkBytes -= len(b.data)
		delete(f.chunks, of)
	}
}

// dropStaleChunks drops the pieces kept from terms before term, since
// more than chunkMaxMillis before the state's clock, or for chunkMaxAge
// entries before index.
func (f *FSM) dropStaleChunks(index, term uint64) {
	now := f.applier.Now()
	for of, b := range f.chunks {
		if b.term < term || now-b.time > chunkMaxMillis || index > b.first+chunkMaxAge {
			f.dropChunk(of)
		}
	}
}
