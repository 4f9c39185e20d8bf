package raftfsm

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/goblindb/goblin/internal/bulkcopy"
	"github.com/goblindb/goblin/packed"
)

// Version is the entry format version of an entry without a proposal
// header; VersionProposal (proposal.go) of one with it.
const Version = 1

// Op is an entry's operation.
type Op uint8

// Entry operations. Values are part of the log format: never renumber.
const (
	OpNoop    Op = iota // does nothing; used as a barrier
	OpCommand           // one data command
	OpMulti             // MULTI/EXEC: several commands applied atomically
	OpExpire            // the leader found these keys expired: delete them
	OpRules             // replace the packed-layout rules
	// OpBatch holds one client's consecutive pipelined writes: applied in
	// order, each on its own (an error stops nothing), replies
	// concatenated. One entry instead of one per command is what lets
	// pipelined writes go faster than Raft's per-entry cost.
	OpBatch
	// OpACL changes the ACL users (aclentry.go).
	OpACL
	// OpChunk is one piece of a data entry too large for one log entry in
	// a cluster (chunk.go).
	OpChunk
)

func (o Op) String() string {
	switch o {
	case OpNoop:
		return "noop"
	case OpCommand:
		return "command"
	case OpMulti:
		return "multi"
	case OpExpire:
		return "expire"
	case OpRules:
		return "rules"
	case OpBatch:
		return "batch"
	case OpACL:
		return "acl"
	case OpChunk:
		return "chunk"
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// Command is one command inside an entry.
type Command struct {
	DB   int
	Argv [][]byte
}

// NewCommand returns the command args in database db.
func NewCommand(db int, args ...string) Command {
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	return Command{DB: db, Argv: argv}
}

// CommandEntry returns an entry of one command, args in database db, from
// a RESP2 connection, stamped with the proposer's clock now (Unix ms).
func CommandEntry(now int64, db int, args ...string) *Entry {
	return &Entry{Op: OpCommand, Proto: 2, Time: now, Commands: []Command{NewCommand(db, args...)}}
}

// WatchedKey is a key a transaction WATCHed.
type WatchedKey struct {
	DB  int
	Key []byte
	// Expired records that the key was already logically expired when
	// watched, so its later expiry is not a change.
	Expired bool
	// Absent records that the key did not exist when watched, so a flush
	// of its database is not a change to it (entries written before this
	// field existed say present: the stricter reading).
	Absent bool
	// Index is the log index the client had seen when it watched this
	// key; 0 means the entry's WatchIndex.
	Index uint64
}

// ExpiredKey names a key the leader found expired, with the expiry time it
// had then (so a key given a new time meanwhile is not deleted).
type ExpiredKey struct {
	DB  int
	Key []byte
	At  int64
}

// Rule is a packed-layout rule as logged.
type Rule struct {
	Pattern string
	Layout  uint8
}

// Entry is a decoded log entry.
type Entry struct {
	Op Op
	// Time is the leader's clock in Unix milliseconds when it proposed the
	// entry.
	Time int64
	// Proto is the protocol (2 or 3) replies are encoded in; Double70 asks
	// for Redis 7.0's double format.
	Proto    uint8
	Double70 bool
	// Commands: one for OpCommand, the queued commands for OpMulti, the
	// pipelined ones for OpBatch.
	Commands []Command
	// WatchIndex and Watched: for OpMulti, EXEC aborts if any watched key
	// changed after log index WatchIndex.
	WatchIndex uint64
	Watched    []WatchedKey
	Expired    []ExpiredKey // OpExpire
	Rules      []Rule       // OpRules
	ACL        *ACLChange   // OpACL
	Chunk      *Chunk       // OpChunk
	// Term and Proposal are the proposal header (proposal.go): the entry
	// takes effect only if it is committed in log term Term, and Proposal
	// names it for its proposer. Both zero: no header.
	Term     uint64
	Proposal uint64
}

// ErrCorrupt is returned by Decode for bytes that are not a valid entry.
var ErrCorrupt = errors.New("raftfsm: corrupt log entry")

const flagDouble70 = 1

// Watched-key flags (one byte per watched key).
const (
	watchExpired  = 1 << 0
	watchAbsent   = 1 << 1
	watchHasIndex = 1 << 2
)

// Encode appends the binary form of e to dst. Given no room (a nil or
// full dst), it makes room for a command entry's whole encoding first, so
// a proposal is one allocation instead of a doubling per few arguments.
func (e *Entry) Encode(dst []byte) []byte {
	if cap(dst) == len(dst) && len(e.Commands) > 0 {
		dst = append(make([]byte, 0, len(dst)+e.commandsLen()), dst...)
	}
	if e.Term != 0 || e.Proposal != 0 {
		dst = append(dst, VersionProposal, byte(e.Op))
		dst = binary.BigEndian.AppendUint64(dst, e.Term)
		dst = binary.BigEndian.AppendUint64(dst, e.Proposal)
	} else {
		dst = append(dst, Version, byte(e.Op))
	}
	switch e.Op {
	case OpCommand, OpMulti, OpBatch:
		var flags byte
		if e.Double70 {
			flags |= flagDouble70
		}
		dst = append(dst, e.Proto, flags)
		dst = binary.AppendVarint(dst, e.Time)
		if e.Op == OpMulti {
			dst = binary.AppendUvarint(dst, e.WatchIndex)
			dst = binary.AppendUvarint(dst, uint64(len(e.Watched)))
			for _, w := range e.Watched {
				var flags byte
				if w.Expired {
					flags |= watchExpired
				}
				if w.Absent {
					flags |= watchAbsent
				}
				if w.Index != 0 {
					flags |= watchHasIndex
				}
				dst = append(dst, byte(w.DB), flags)
				dst = appendBytes(dst, w.Key)
				if w.Index != 0 {
					dst = binary.AppendUvarint(dst, w.Index)
				}
			}
		}
		dst = binary.AppendUvarint(dst, uint64(len(e.Commands)))
		for _, c := range e.Commands {
			dst = append(dst, byte(c.DB))
			dst = binary.AppendUvarint(dst, uint64(len(c.Argv)))
			for _, a := range c.Argv {
				dst = appendBytes(dst, a)
			}
		}
	case OpExpire:
		dst = binary.AppendVarint(dst, e.Time)
		dst = binary.AppendUvarint(dst, uint64(len(e.Expired)))
		for _, k := range e.Expired {
			dst = append(dst, byte(k.DB))
			dst = appendBytes(dst, k.Key)
			dst = binary.AppendVarint(dst, k.At)
		}
	case OpRules:
		dst = binary.AppendUvarint(dst, uint64(len(e.Rules)))
		for _, r := range e.Rules {
			dst = appendBytes(dst, []byte(r.Pattern))
			dst = append(dst, r.Layout)
		}
	case OpACL:
		c := e.ACL
		if c == nil {
			c = &ACLChange{}
		}
		dst = c.encode(dst)
	case OpChunk:
		dst = e.Chunk.encode(dst, e.Time)
	}
	return dst
}

// Restamp returns a copy of data, an encoded command entry (OpCommand,
// OpBatch or OpMulti), whose clock is t: the bytes before and after the
// time are data's own, so a leader restamping an entry a follower
// encoded does not encode it again. It returns false for
// another op or a header cut short; a caller that checked data with
// DecodeInto then has an entry to set Time on and encode instead.
func Restamp(data []byte, t int64) ([]byte, bool) {
	// The header as DecodeInto reads it, up to the time.
	d := &decoder{b: data}
	v, op := d.byte(), Op(d.byte())
	if v != Version && v != VersionProposal {
		return nil, false
	}
	switch op {
	case OpCommand, OpMulti, OpBatch:
	default:
		return nil, false
	}
	if v == VersionProposal {
		d.uint64() // term
		d.uint64() // proposal
	}
	d.byte() // protocol
	d.byte() // flags
	at := len(data) - len(d.b)
	d.varint()
	if d.err != nil {
		return nil, false
	}
	out := make([]byte, 0, at+binary.MaxVarintLen64+len(d.b))
	out = append(out, data[:at]...)
	out = binary.AppendVarint(out, t)
	return bulkcopy.Append(out, d.b), true
}

// commandsLen bounds the encoding of e's header and commands (not what
// an OpMulti watches).
func (e *Entry) commandsLen() int {
	n := 2 + 2*binary.MaxVarintLen64 + 2 + 2*binary.MaxVarintLen64
	for _, c := range e.Commands {
		n += 1 + binary.MaxVarintLen64
		for _, a := range c.Argv {
			n += binary.MaxVarintLen64 + len(a)
		}
	}
	return n
}

func appendBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return bulkcopy.Append(dst, b)
}

// decoder reads an entry with bounds checks; the first failure sticks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = ErrCorrupt
	}
	d.b = nil
}

func (d *decoder) byte() byte {
	if len(d.b) < 1 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uint64() uint64 {
	if len(d.b) < 8 {
		d.fail()
		return 0
	}
	v := binary.BigEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a length that must be plausible given what is left (each
// item takes at least min bytes), so a corrupt count cannot make us
// allocate without bound.
func (d *decoder) count(min int) int {
	n := d.uvarint()
	if n > uint64(len(d.b)/min) {
		d.fail()
		return 0
	}
	return int(n)
}

// bytes returns a slice of the entry's own buffer (no copy).
func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	b := d.b[:n:n]
	d.b = d.b[n:]
	return b
}

func (d *decoder) db() int {
	v := d.byte()
	if v >= 16 {
		d.fail()
	}
	return int(v)
}

// Decode parses an entry. Byte slices in the result alias data.
func Decode(data []byte) (*Entry, error) {
	e := &Entry{}
	if err := DecodeInto(e, data); err != nil {
		return nil, err
	}
	return e, nil
}

// DecodeInto parses an entry into e, reusing e's command slices (the FSM
// decodes every entry into one scratch Entry instead of allocating).
// Byte slices in e alias data.
func DecodeInto(e *Entry, data []byte) error {
	d := &decoder{b: data}
	v := d.byte()
	if v != Version && v != VersionProposal {
		return fmt.Errorf("%w: version %d", ErrCorrupt, v)
	}
	*e = Entry{Op: Op(d.byte()), Commands: e.Commands[:0]}
	if v == VersionProposal {
		e.Term, e.Proposal = d.uint64(), d.uint64()
		if e.Term == 0 && e.Proposal == 0 {
			d.fail() // Encode writes no header then
		}
	}
	switch e.Op {
	case OpNoop:
	case OpCommand, OpMulti, OpBatch:
		e.Proto = d.byte()
		flags := d.byte()
		e.Double70 = flags&flagDouble70 != 0
		if (e.Proto != 2 && e.Proto != 3) || flags&^flagDouble70 != 0 {
			d.fail()
		}
		e.Time = d.varint()
		if e.Op == OpMulti {
			e.WatchIndex = d.uvarint()
			n := d.count(3)
			e.Watched = make([]WatchedKey, n)
			for i := range e.Watched {
				e.Watched[i].DB = d.db()
				flags := d.byte()
				if flags&^(watchExpired|watchAbsent|watchHasIndex) != 0 {
					d.fail()
				}
				e.Watched[i].Expired = flags&watchExpired != 0
				e.Watched[i].Absent = flags&watchAbsent != 0
				e.Watched[i].Key = d.bytes()
				if flags&watchHasIndex != 0 {
					if e.Watched[i].Index = d.uvarint(); e.Watched[i].Index == 0 {
						d.fail()
					}
				}
			}
		}
		n := d.count(2)
		e.Commands = grow(e.Commands, n)
		for i := range e.Commands {
			c := &e.Commands[i]
			c.DB = d.db()
			argc := d.count(1)
			if argc == 0 {
				d.fail()
			}
			c.Argv = grow(c.Argv, argc)
			for j := range c.Argv {
				c.Argv[j] = d.bytes()
			}
		}
		if (e.Op == OpCommand && n != 1) || (e.Op == OpBatch && n == 0) {
			d.fail()
		}
	case OpExpire:
		e.Time = d.varint()
		n := d.count(3)
		e.Expired = make([]ExpiredKey, n)
		for i := range e.Expired {
			e.Expired[i].DB = d.db()
			e.Expired[i].Key = d.bytes()
			e.Expired[i].At = d.varint()
		}
	case OpRules:
		n := d.count(2)
		e.Rules = make([]Rule, n)
		for i := range e.Rules {
			e.Rules[i].Pattern = string(d.bytes())
			e.Rules[i].Layout = d.byte()
			if !packed.Layout(e.Rules[i].Layout).Valid() {
				d.fail() // a layout this build does not know
			}
		}
	case OpACL:
		e.ACL = decodeACL(d, false)
	case OpChunk:
		e.Chunk = decodeChunk(d, e)
	default:
		d.fail()
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail()
	}
	return d.err
}

// grow returns s resliced to n elements, reusing its array when it is
// large enough.
func grow[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}
