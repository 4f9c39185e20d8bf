package packed

import "math/bits"

// The member index: a Swiss-style open-addressing table from member to
// score.
//
// Slots come in groups of eight. Each group holds eight control bytes (one
// uint64), eight members and eight scores, in one pointer-free struct, so a
// probe touches one group at a time. A control byte is EMPTY (0x80), DELETED
// (0xFE, a tombstone) or the low seven bits of the member's hash (its
// fingerprint). A lookup reduces the 64-bit hash to a home group with a
// multiply-shift (so the group count need not be a power of two, and the
// table can grow by 1.5x instead of 2x), matches the fingerprint against all
// eight control bytes at once with SWAR arithmetic, compares members only
// where fingerprints match, and moves to the next group (linearly, wrapping)
// until it finds the member or a group with an EMPTY byte.
//
// Lookups are single-probe and prepared: find returns either the member's
// slot or the vacant slot where it would go, so an update reads and later
// rewrites the score through the slot, an insertion publishes into the
// vacant slot only after the tree insert has succeeded (commit), and a
// removal erases the slot it found without a second probe (erase).
//
// The load limit is 7/8 of the slots counting tombstones. An erase in a
// group that still has an EMPTY byte leaves EMPTY rather than a tombstone:
// such a group has never been full since the last rehash, so no probe
// sequence ever passed through it.

const (
	groupSize = 8
	ctrlEmpty = 0x80
	ctrlTomb  = 0xFE
	lsbs      = 0x0101010101010101
	msbs      = 0x8080808080808080
	allEmpty  = lsbs * ctrlEmpty
)

// The growth factor, growNum/growDen: a resize leaves the load at
// (7/8)/(growNum/growDen). See doc.go for the measured choice.
const growNum, growDen = 3, 2

// group is eight slots. vals precedes keys because V may be struct{}: a
// zero-size last field would make Go pad the struct.
type group[M member, V any] struct {
	ctrl uint64
	vals [groupSize]V
	keys [groupSize]M
}

type swiss[M member, V any] struct {
	groups     []group[M, V]
	count      int // members
	tombs      int // DELETED control bytes
	growthLeft int // insertions into EMPTY slots left before a resize
}

// matchH2 returns a mask with the high bit set in each byte of ctrl that may
// equal h2 (false positives are possible; members are compared anyway).
func matchH2(ctrl, h2 uint64) uint64 {
	x := ctrl ^ (lsbs * h2)
	return (x - lsbs) &^ x & msbs
}

// matchEmpty returns a mask of the EMPTY bytes of ctrl.
func matchEmpty(ctrl uint64) uint64 { return ctrl &^ (ctrl << 6) & msbs }

// matchVacant returns a mask of the EMPTY and DELETED bytes of ctrl.
func matchVacant(ctrl uint64) uint64 { return ctrl & msbs }

func firstSlot(mask uint64) int { return bits.TrailingZeros64(mask) >> 3 }

// homeGroup maps a hash to a group with a multiply-shift.
func homeGroup(h uint64, n int) int {
	hi, _ := bits.Mul64(h, uint64(n))
	return int(hi)
}

// groupsFor returns the group count that holds n members at the load a
// resize leaves.
func groupsFor(n int) int {
	return max(1, ((n+1)*growNum+7*growDen-1)/(7*growDen))
}

// init allocates an empty table for about n members.
func (x *swiss[M, V]) init(groups int) {
	x.groups = make([]group[M, V], groups)
	for i := range x.groups {
		x.groups[i].ctrl = allEmpty
	}
	x.count, x.tombs, x.growthLeft = 0, 0, 7*groups
}

func (x *swiss[M, V]) val(slot int) V { return x.groups[slot>>3].vals[slot&7] }

func (x *swiss[M, V]) setVal(slot int, v V) { x.groups[slot>>3].vals[slot&7] = v }

func (x *swiss[M, V]) key(slot int) *M { return &x.groups[slot>>3].keys[slot&7] }

func (x *swiss[M, V]) setCtrl(slot int, b uint64) {
	g := &x.groups[slot>>3]
	shift := uint(slot&7) * 8
	g.ctrl = g.ctrl&^(0xff<<shift) | b<<shift
}

func (x *swiss[M, V]) ctrlAt(slot int) uint64 {
	return x.groups[slot>>3].ctrl >> (uint(slot&7) * 8) & 0xff
}

// find looks p up. It returns p's slot and true, or the vacant slot where p
// would be inserted and false (-1 if the table is unallocated).
func (c *zcore[M, S, V]) find(h uint64, p *probe[M]) (int, bool) {
	x := &c.idx
	n := len(x.groups)
	if n == 0 {
		return -1, false
	}
	g, h2, vacant := homeGroup(h, n), h&0x7f, -1
	for {
		grp := &x.groups[g]
		for m := matchH2(grp.ctrl, h2); m != 0; m &= m - 1 {
			j := firstSlot(m)
			if kindOf[M]() != MemberBytes && grp.keys[j] == p.m || kindOf[M]() == MemberBytes && c.ar.equal(*asRef(&grp.keys[j]), p.b) {
				return g<<3 | j, true
			}
		}
		if vacant < 0 && x.tombs > 0 {
			if m := matchVacant(grp.ctrl); m != 0 {
				vacant = g<<3 | firstSlot(m)
			}
		}
		if m := matchEmpty(grp.ctrl); m != 0 {
			if vacant < 0 {
				vacant = g<<3 | firstSlot(m)
			}
			return vacant, false
		}
		if g++; g == n {
			g = 0
		}
	}
}

// reserve makes sure vacant slot (from find) can take a new member with
// hash h, resizing the table if needed, and returns the slot to commit to.
func (c *zcore[M, S, V]) reserve(h uint64, slot int) int {
	x := &c.idx
	if slot >= 0 && (x.growthLeft > 0 || x.ctrlAt(slot) == ctrlTomb) {
		return slot
	}
	switch {
	case x.groups == nil:
		x.init(1)
	case x.tombs > x.count/4:
		c.rehash(len(x.groups))
	default:
		c.rehash(groupsFor(x.count + 1))
	}
	return x.freshSlot(h)
}

// commit publishes a member into a slot returned by reserve.
func (x *swiss[M, V]) commit(slot int, h uint64, m M, v V) {
	if x.ctrlAt(slot) == ctrlTomb {
		x.tombs--
	} else {
		x.growthLeft--
	}
	x.setCtrl(slot, h&0x7f)
	x.groups[slot>>3].keys[slot&7] = m
	x.groups[slot>>3].vals[slot&7] = v
	x.count++
}

// erase removes the member in slot. The slot becomes EMPTY if its group
// has an EMPTY slot (no probe sequence continues past the group) and a
// tombstone otherwise; which one is chosen without a jump, since it is a
// coin toss at the loads the index runs at.
func (x *swiss[M, V]) erase(slot int) {
	x.count--
	var zero M
	g := &x.groups[slot>>3]
	g.keys[slot&7] = zero
	e := int(b2u(matchEmpty(g.ctrl) != 0))
	x.setCtrl(slot, uint64(ctrlTomb-(ctrlTomb-ctrlEmpty)*e))
	x.growthLeft += e
	x.tombs += 1 - e
}

// freshSlot returns the first vacant slot on h's probe sequence.
func (x *swiss[M, V]) freshSlot(h uint64) int {
	n := len(x.groups)
	for g := homeGroup(h, n); ; {
		if m := matchVacant(x.groups[g].ctrl); m != 0 {
			return g<<3 | firstSlot(m)
		}
		if g++; g == n {
			g = 0
		}
	}
}

// rehash rebuilds the index with n groups, dropping tombstones.
func (c *zcore[M, S, V]) rehash(n int) {
	old := c.idx.groups
	x := &c.idx
	x.init(n)
	// The new table has no tombstones and no member twice: each member
	// goes into the first EMPTY slot of its probe sequence, written here
	// directly rather than through freshSlot and commit (a rehash moves
	// about two members per insertion over a table's growth).
	for gi := range old {
		g := &old[gi]
		for m := ^g.ctrl & msbs; m != 0; m &= m - 1 {
			j := firstSlot(m)
			var p probe[M]
			c.stored(g.keys[j], &p)
			h := hashProbe(&p)
			t := homeGroup(h, n)
			for x.groups[t].ctrl&msbs == 0 { // no EMPTY byte
				if t++; t == n {
					t = 0
				}
			}
			ng := &x.groups[t]
			k := firstSlot(ng.ctrl & msbs)
			shift := uint(k) * 8
			ng.ctrl = ng.ctrl&^(0xff<<shift) | (h&0x7f)<<shift
			ng.keys[k], ng.vals[k] = g.keys[j], g.vals[j]
			x.count++
			x.growthLeft--
		}
	}
}

// maybeShrink gives memory back after many removals.
func (c *zcore[M, S, V]) maybeShrink() {
	x := &c.idx
	if n := len(x.groups); n > 1 && x.count < n { // load below 1/8
		if x.count == 0 {
			x.groups, x.count, x.tombs, x.growthLeft = nil, 0, 0, 0
			return
		}
		c.rehash(groupsFor(x.count))
	}
}
