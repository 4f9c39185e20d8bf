package backup

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"math"
	"sort"

	"github.com/goblindb/goblin/keyspace"
	"github.com/goblindb/goblin/packed"
	"github.com/goblindb/goblin/raftfsm"
)

// Sum is a state digest: SHA-256 of the digest stream (doc.go).
type Sum [sha256.Size]byte

// String returns the digest in lowercase hex, as GOBLIN DIGEST answers it.
func (s Sum) String() string { return hex.EncodeToString(s[:]) }

// ParseSum parses a digest written by String.
func ParseSum(s string) (Sum, bool) {
	var out Sum
	if len(s) != 2*len(out) {
		return out, false
	}
	if _, err := hex.Decode(out[:], []byte(s)); err != nil {
		return out, false
	}
	return out, true
}

// digestVersion starts the digest stream: a different definition of the
// stream gives different digests, never equal ones for different states.
const digestVersion = "goblin-digest-1\n"

// Counts describes what a state holds.
type Counts struct {
	Keys    uint64 // keys in every database (expired ones not yet deleted included)
	Expires uint64 // keys with a time to live
	Members uint64 // members of every sorted set
	// Layouts counts keys and members per layout, for the layouts in use,
	// in layout order.
	Layouts []LayoutCount
	// Users is how many ACL users the state holds; -1 when it has none
	// replicated (each node then enforces its own configuration).
	Users int
}

// LayoutCount is how many keys, and members in them, have one layout.
type LayoutCount struct {
	Layout        packed.Layout
	Keys, Members uint64
}

// Digest returns the digest of st and what it holds. It reads st without
// locks: a Capture's view never changes, and a decoded backup's keyspace
// must not change meanwhile.
// It streams: the memory it uses does not grow with the state.
func Digest(st *raftfsm.State) (Sum, Counts) {
	d := digester{h: sha256.New(), buf: make([]byte, 0, 64<<10)}
	d.buf = append(d.buf, digestVersion...)
	var c Counts
	var perLayout [256]LayoutCount
	v := st.View()
	for db := 0; db < keyspace.NumDBs; db++ {
		d.uvarint(uint64(v.Len(db)))
		v.Each(db, func(e *keyspace.ViewEntry) {
			l := e.Z.Layout()
			n := e.Z.Len()
			d.bytes([]byte(e.Key))
			d.buf = append(d.buf, byte(l))
			d.buf = binary.AppendVarint(d.buf, e.ExpireAt)
			d.uvarint(uint64(n))
			e.Z.Each(func(m []byte, s float64) bool {
				d.bytes(m)
				d.buf = binary.LittleEndian.AppendUint64(d.buf, math.Float64bits(s))
				d.spill()
				return true
			})
			d.spill()
			c.Keys++
			c.Members += uint64(n)
			if e.ExpireAt != 0 {
				c.Expires++
			}
			perLayout[l].Keys++
			perLayout[l].Members += uint64(n)
		})
	}
	c.Users = -1
	if us := st.ACLUsers(); us == nil {
		d.buf = append(d.buf, 0)
	} else {
		d.buf = append(d.buf, 1)
		states := us.State()
		sort.Slice(states, func(i, j int) bool { return states[i].Name < states[j].Name })
		c.Users = len(states)
		d.uvarint(uint64(len(states)))
		for _, u := range states {
			d.bytes([]byte(u.Name))
			d.strings(u.Rules)
			d.uvarint(uint64(len(u.Selectors)))
			for _, sel := range u.Selectors {
				d.strings(sel)
			}
			d.spill()
		}
	}
	for l, lc := range perLayout {
		if lc.Keys > 0 {
			lc.Layout = packed.Layout(l)
			c.Layouts = append(c.Layouts, lc)
		}
	}
	d.h.Write(d.buf)
	var sum Sum
	d.h.Sum(sum[:0])
	return sum, c
}

// digester buffers the digest stream in front of the hash.
type digester struct {
	h   hash.Hash
	buf []byte
}

func (d *digester) uvarint(v uint64) { d.buf = binary.AppendUvarint(d.buf, v) }

func (d *digester) bytes(b []byte) {
	d.uvarint(uint64(len(b)))
	d.buf = append(d.buf, b...)
}

func (d *digester) strings(ss []string) {
	d.uvarint(uint64(len(ss)))
	for _, s := range ss {
		d.bytes([]byte(s))
	}
}

// spill hashes the buffer once it is large.
func (d *digester) spill() {
	if len(d.buf) >= 32<<10 {
		d.h.Write(d.buf)
		d.buf = d.buf[:0]
	}
}
