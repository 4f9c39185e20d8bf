package packed

import "math/bits"

// The member index: a Swiss-style open-addressing table from member to
// score.
//
// Slots come in groups of eight. Each group holds eight control bytes (one
// uint64), eight members and eight scores, in one pointer-free struct, so a
// probe touches one group at a time. A control byte is EMPTY (0x00),
// DELETED (0x01, a tombstone) or, for a member, the high bit over the low
// seven bits of the member's hash (its fingerprint). EMPTY is zero so that a
// new table is ready as the allocator returns it: nothing writes it whole,
// and its pages are touched only as members arrive (a resize moves them a
// few groups at a time, see rehash). A lookup reduces the 64-bit hash to a
// home group with a multiply-shift (so the group count need not be a power
// of two, and the table can grow by 1.5x instead of 2x), matches the
// fingerprint against all eight control bytes at once with SWAR arithmetic,
// compares members only where fingerprints match, and moves to the next
// group (linearly, wrapping) until it finds the member or a group with an
// EMPTY byte.
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
	ctrlEmpty = 0x00
	ctrlTomb  = 0x01
	lsbs      = 0x0101010101010101
	msbs      = 0x8080808080808080
)

// fingerprint returns the control byte of a slot holding a member with
// hash h.
func fingerprint(h uint64) uint64 { return 0x80 | h&0x7f }

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
	count      int // members, in both tables while a resize moves them
	tombs      int // DELETED control bytes in groups
	growthLeft int // insertions into EMPTY slots of groups left before a resize

	mv *resize[M, V] // the resize in progress (see migrate), or nil
}

// resize is a resize that moves the members a few groups at a time: old is
// the table being emptied, whose groups before next are empty; step groups
// move at each write command and each removal (see step). (Kept apart so
// that a set that is not resizing, as small sets never are, carries one
// pointer.)
type resize[M member, V any] struct {
	old        []group[M, V]
	next, step int
}

// oldGroups returns the table a resize is emptying, or nil.
func (x *swiss[M, V]) oldGroups() []group[M, V] {
	if x.mv == nil {
		return nil
	}
	return x.mv.old
}

// oldSlot marks a slot number as one of the old table's.
const oldSlot = 1 << 40

// migrateAll is the size, in groups, up to which a resize moves every
// member at once, and the fewest groups a step moves.
const migrateAll, migrateMin = 64, 2

// matchH2 returns a mask with the high bit set in each byte of ctrl that may
// equal fp, a fingerprint (false positives are possible; members are
// compared anyway).
func matchH2(ctrl, fp uint64) uint64 {
	x := ctrl ^ (lsbs * fp)
	return (x - lsbs) &^ x & msbs
}

// matchEmpty returns a mask of the EMPTY bytes of ctrl: high bit and low
// bit clear.
func matchEmpty(ctrl uint64) uint64 { return ^ctrl &^ (ctrl << 7) & msbs }

// matchVacant returns a mask of the EMPTY and DELETED bytes of ctrl.
func matchVacant(ctrl uint64) uint64 { return ^ctrl & msbs }

// matchFull returns a mask of the bytes of ctrl that hold members.
func matchFull(ctrl uint64) uint64 { return ctrl & msbs }

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
	x.groups = make([]group[M, V], groups) // all EMPTY
	x.count, x.tombs, x.growthLeft = 0, 0, 7*groups
	x.mv = nil
}

// group returns the group of a slot of either table.
func (x *swiss[M, V]) group(slot int) *group[M, V] {
	if slot&oldSlot != 0 {
		return &x.mv.old[slot&^oldSlot>>3]
	}
	return &x.groups[slot>>3]
}

func (x *swiss[M, V]) val(slot int) V { return x.group(slot).vals[slot&7] }

func (x *swiss[M, V]) setVal(slot int, v V) { x.group(slot).vals[slot&7] = v }

func (x *swiss[M, V]) key(slot int) *M { return &x.group(slot).keys[slot&7] }

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
	g, h2, vacant := homeGroup(h, n), fingerprint(h), -1
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

// findMoving is find while a resize moves members: it searches both
// tables, and returns the member's slot in either (an old one marked
// oldSlot), or the new table's vacant slot. A member whose home group in
// the old table is not yet moved is most likely still there, so that table
// comes first for it.
func (c *zcore[M, S, V]) findMoving(h uint64, p *probe[M]) (int, bool) {
	mv := c.idx.mv
	oldFirst := homeGroup(h, len(mv.old)) >= mv.next
	if oldFirst {
		if slot, ok := c.findOld(h, p); ok {
			return slot, true
		}
	}
	slot, ok := c.find(h, p)
	if !ok && !oldFirst {
		if s, ok := c.findOld(h, p); ok {
			return s, true
		}
	}
	return slot, ok
}

// findOld looks p up in the old table, while a resize moves its members.
// The old table takes no insertions, so it keeps the EMPTY bytes that end
// its probes; moved members leave tombstones.
func (c *zcore[M, S, V]) findOld(h uint64, p *probe[M]) (int, bool) {
	old := c.idx.mv.old
	n := len(old)
	for g, h2 := homeGroup(h, n), fingerprint(h); ; {
		grp := &old[g]
		for m := matchH2(grp.ctrl, h2); m != 0; m &= m - 1 {
			j := firstSlot(m)
			if kindOf[M]() != MemberBytes && grp.keys[j] == p.m || kindOf[M]() == MemberBytes && c.ar.equal(*asRef(&grp.keys[j]), p.b) {
				return oldSlot | g<<3 | j, true
			}
		}
		if matchEmpty(grp.ctrl) != 0 {
			return -1, false
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
	x.place(slot, h, m, v)
	x.count++
}

// place writes member m with hash h and value v into vacant slot of the
// table (not the old one), counting the slot as used.
func (x *swiss[M, V]) place(slot int, h uint64, m M, v V) {
	if x.ctrlAt(slot) == ctrlTomb {
		x.tombs--
	} else {
		x.growthLeft--
	}
	x.setCtrl(slot, fingerprint(h))
	x.groups[slot>>3].keys[slot&7] = m
	x.groups[slot>>3].vals[slot&7] = v
}

// erase removes the member in slot. The slot becomes EMPTY if its group
// has an EMPTY slot (no probe sequence continues past the group) and a
// tombstone otherwise; which one is chosen without a jump, since it is a
// coin toss at the loads the index runs at.
func (x *swiss[M, V]) erase(slot int) {
	x.count--
	var zero M
	g, shift := x.group(slot), uint(slot&7)*8
	g.keys[slot&7] = zero
	// A slot of the old table, whose counts no longer matter, always
	// becomes a tombstone, as a moved member's does.
	cur := int(b2u(slot&oldSlot == 0))
	e := int(b2u(matchEmpty(g.ctrl) != 0)) & cur
	g.ctrl = g.ctrl&^(0xff<<shift) | uint64(ctrlTomb-(ctrlTomb-ctrlEmpty)*e)<<shift
	x.growthLeft += e
	x.tombs += cur - e
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

// rehash gives the index a new table of n groups, dropping tombstones,
// and starts moving the members into it (migrate). A large table's members
// move a few groups at a time, at each later insertion, update and
// removal, so that no one command pays for a whole resize (growing to four
// million members took 166 ms in one insertion, 406 ms with standard
// members, whose hashes are recomputed from their arena records). Lookups
// meanwhile search the new table and then the old one. Only a resize that
// finds the last one still moving finishes it first.
func (c *zcore[M, S, V]) rehash(n int) {
	x := &c.idx
	c.finishResize()
	old, count := x.groups, x.count
	x.init(n)
	x.count = count
	if len(old) == 0 {
		return
	}
	// Moving sixteen times the old groups as the new table has insertions
	// to spare beyond the members it takes over finishes within a
	// sixteenth of them, whatever mix of commands comes (while it lasts, a
	// lookup may search both tables): after growth, five groups (about 35
	// members) at each command.
	spare := max(1, x.growthLeft-count)
	mv := &resize[M, V]{old: old, step: max(migrateMin, (16*len(old)+spare-1)/spare)}
	if len(old) <= migrateAll {
		mv.step = len(old)
	}
	x.mv = mv
	c.migrate(mv.step)
}

// migrate moves the members of the old table's next k groups into the new
// table. Each takes the first vacant slot of its probe sequence, as an
// insertion would (no member is in both tables, so none is looked up),
// and leaves a tombstone, so that the old table's probes still pass.
func (c *zcore[M, S, V]) migrate(k int) {
	x := &c.idx
	for ; k > 0 && x.mv != nil; k-- {
		mv := x.mv
		g := &mv.old[mv.next]
		full := matchFull(g.ctrl)
		for m := full; m != 0; m &= m - 1 {
			j := firstSlot(m)
			var p probe[M]
			c.stored(g.keys[j], &p)
			h := hashProbe(&p)
			x.place(x.freshSlot(h), h, g.keys[j], g.vals[j])
		}
		bytes := full >> 7 * 0xff
		g.ctrl = g.ctrl&^bytes | bytes&(lsbs*ctrlTomb)
		if mv.next++; mv.next == len(mv.old) {
			x.mv = nil
		}
	}
}

// step moves the next few groups of a resize in progress (the callers
// check that there is one, which saves a call on every other command).
// Every write command calls it before it looks its member up (add;
// removals when they erase a slot), no-ops included, so that a resize
// finishes under any mix of writes; reads never change the set.
func (c *zcore[M, S, V]) step() { c.migrate(c.idx.mv.step) }

// maybeShrink gives memory back after many removals.
func (c *zcore[M, S, V]) maybeShrink() {
	x := &c.idx
	if n := len(x.groups); n > 1 && x.count < n { // load below 1/8
		if x.count == 0 {
			*x = swiss[M, V]{}
			return
		}
		c.rehash(groupsFor(x.count))
	}
}

// finishResize moves every member a resize in progress has not moved yet.
func (c *zcore[M, S, V]) finishResize() {
	if mv := c.idx.mv; mv != nil {
		c.migrate(len(mv.old) - mv.next)
	}
}
