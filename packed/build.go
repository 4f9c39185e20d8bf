package packed

import (
	"errors"
	"iter"
)

// errOrder reports entries given to a builder out of order or repeated.
var errOrder = errors.New("packed: entries out of order or repeated")

// builder bulk-loads an empty core from n entries given in strictly
// increasing (score, member) order: it fills leaves left to right, spreads
// the entries evenly over them (each about 7/8 full, leaving room for later
// insertions without immediate splits), and builds the branch levels bottom
// up. Decode, Clone and widening use it; it costs one index insertion per
// entry and no tree descent.
type builder[M member, S score, V any] struct {
	c           *zcore[M, S, V]
	n, added    int
	nLeaves     int
	base, extra int
	leaves      []*leaf[M, S]
	cur         *leaf[M, S]
	want        int
	prevS       S
	prevM       M
}

func (c *zcore[M, S, V]) newBuilder(n int) *builder[M, S, V] {
	b := &builder[M, S, V]{c: c, n: n}
	if n > 0 {
		fill := max(1, c.leafCap-c.leafCap/8)
		b.nLeaves = (n + fill - 1) / fill
		b.base, b.extra = n/b.nLeaves, n%b.nLeaves
		if n > c.smallLimit() {
			c.idx.init(groupsFor(min(n, 1<<16)))
		}
	}
	return b
}

// add appends an entry. It fails if the entry is out of order, its member
// is already present, or there are more than n entries.
func (b *builder[M, S, V]) add(p *probe[M], s S) error {
	c := b.c
	if s != s || b.added == b.n {
		return errOrder
	}
	if b.added > 0 && !(s > b.prevS || s == b.prevS && c.cmpMember(p, &b.prevM) > 0) {
		return errOrder
	}
	h := hashProbe(p)
	slot := -1
	if c.indexed() {
		// A load is one long command: a resize it starts is finished at
		// once, before its slot is looked up.
		c.finishResize()
		var found bool
		if slot, found = c.find(h, p); found {
			return errOrder
		}
		slot = c.reserve(h, slot)
	} else {
		for _, l := range b.leaves {
			for i := range l.n() {
				if m := l.key(i); c.eqMember(p, &m) {
					return errOrder
				}
			}
		}
	}
	m := p.m
	if kindOf[M]() == MemberBytes {
		r, ok := c.ar.add(p.b, float64(s))
		if !ok {
			return ErrTooLarge
		}
		m = refMember[M](r)
	}
	if b.cur == nil || b.cur.n() == b.want {
		k := len(b.leaves)
		b.want = b.base
		if k < b.extra {
			b.want++
		}
		capacity := c.leafCap
		if b.nLeaves == 1 {
			capacity = min(c.leafCap, max(initialLeafCap, b.n))
		}
		l := newLeaf[M, S](capacity)
		if b.cur != nil {
			b.cur.next, l.prev = l, b.cur
		}
		b.leaves = append(b.leaves, l)
		b.cur = l
	}
	b.cur.push(m, s, prefixOf(p))
	c.commitSlot(slot, h, m, s)
	b.prevS, b.prevM = s, m
	b.added++
	return nil
}

// node is a subtree while the branch levels are built.
type node[M member, S score] struct {
	l     *leaf[M, S]
	b     *branch[M, S]
	count int
	fs    S // the subtree's first key, its fence in the parent
	fm    M
}

// finish builds the branch levels. It fails if fewer than n entries were
// added.
func (b *builder[M, S, V]) finish() error {
	b.c.finishResize()
	c := b.c
	if b.added != b.n {
		return errOrder
	}
	c.n = b.n
	if b.n == 0 {
		return nil
	}
	level := make([]node[M, S], len(b.leaves))
	for i, l := range b.leaves {
		level[i] = node[M, S]{l: l, count: l.n(), fs: l.score(0), fm: l.key(0)}
	}
	fan := max(2, c.branchCap-c.branchCap/4)
	for len(level) > 1 {
		parents := (len(level) + fan - 1) / fan
		base, extra := len(level)/parents, len(level)%parents
		next := make([]node[M, S], 0, parents)
		for k := 0; k < parents; k++ {
			w := base
			if k < extra {
				w++
			}
			nb := &branch[M, S]{n: w}
			nd := node[M, S]{b: nb, fs: level[0].fs, fm: level[0].fm}
			for i, ch := range level[:w] {
				nb.counts[i], nb.leaves[i], nb.kids[i] = ch.count, ch.l, ch.b
				c.setFence(nb, i, ch.fs, ch.fm)
				nd.count += ch.count
			}
			next = append(next, nd)
			level = level[w:]
		}
		level = next
		c.height++
	}
	if c.height == 0 {
		c.rootLeaf = level[0].l
	} else {
		c.root = level[0].b
	}
	return nil
}

// load bulk-loads an empty core from n entries given as text, in order.
func (c *zcore[M, S, V]) load(n int, entries iter.Seq2[[]byte, float64]) error {
	b := c.newBuilder(n)
	var err error
	for m, s := range entries {
		var p probe[M]
		if parseProbe(m, &p) != parseOK || !fits[M, S](s) {
			return ErrMember
		}
		if err = b.add(&p, S(s)); err != nil {
			return err
		}
	}
	return b.finish()
}
