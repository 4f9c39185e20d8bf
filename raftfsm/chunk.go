package raftfsm

import (
	"encoding/binary"
	"errors"
	"fmt"
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
//     term, can no longer take effect), or when chunkMaxAge log entries
//     passed since the first;
//   - a snapshot is not taken while pieces are kept (ErrChunksPending):
//     a node restoring it would lack them when the rest came.
//
// Every node decides all of this from the log alone, so every node keeps
// and drops the same pieces. The whole entry is checked as the leader
// checks a client's entry (Validate) before it is applied; one that fails
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

// chunkMaxAge is how many log entries the pieces of an entry are kept
// after its first piece's index, if its last piece never comes.
const chunkMaxAge = 1 << 20

var (
	// ErrChunkBroken is the result of a piece that does not follow the
	// pieces kept for its entry: nothing of the entry was applied.
	ErrChunkBroken = errors.New("raftfsm: a piece of a split entry is missing: nothing of it was applied")
	// ErrChunksPending refuses a snapshot while an entry's pieces are
	// kept.
	ErrChunksPending = errors.New("raftfsm: a write split over several log entries is being applied; the snapshot is taken later")
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
		b = &chunkBuf{term: term, first: index}
		if f.chunks == nil {
			f.chunks = map[uint64]*chunkBuf{}
		}
		f.chunks[c.Of] = b
	case b == nil || b.term != term || b.next != c.Seq:
		delete(f.chunks, c.Of)
		return Result{Index: index, Err: ErrChunkBroken}
	}
	b.data = append(b.data, c.Piece...)
	b.next++
	if !c.Last {
		return Result{Index: index}
	}
	delete(f.chunks, c.Of)
	var whole Entry
	if err := DecodeInto(&whole, b.data); err != nil {
		return f.failChunked(index, term, err)
	}
	if err := Validate(&whole); err != nil || whole.Op == OpACL {
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

// dropStaleChunks drops the pieces kept from terms before term, or for
// chunkMaxAge entries before index.
func (f *FSM) dropStaleChunks(index, term uint64) {
	for of, b := range f.chunks {
		if b.term < term || index > b.first+chunkMaxAge {
			delete(f.chunks, of)
		}
	}
}
