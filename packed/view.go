package packed

import (
	"bufio"
	"encoding/binary"
	"io"
	"slices"
)

// View is a read-only point-in-time image of a set, for snapshots and
// backups: it can be encoded or read on any goroutine while the set it
// was taken of goes on changing on another.
//
// Taking one copies no entry. A view holds each leaf's live run (its
// arrays sliced to the live entries) and, for the standard
// layout, a copy of the arena's chunk list; the arrays and the chunks'
// buffers stay shared with the set. The leaf is marked shared, and the
// set copies a shared leaf's arrays before its first write to them
// (leaf.own): copy on write, a leaf at a time. The arena needs no copies:
// a record's length and bytes are never written after it is appended
// (appends go past every view's end of a chunk, and a chunk emptied by
// reclaiming is dropped from the set's list, not reused in place), and
// the score in a record, which the set does write, a view never reads: a
// view takes scores from the leaves. The index is not in a view at all.
//
// So Snapshot costs a copy of three slice headers per leaf (of about 400
// entries): 25,000 copies for 10,000,000 members. The memory a view keeps is the arrays
// the set has replaced since: at most the leaves' arrays once over (8
// bytes an INT32/FLOAT32 member, of 22), and only as many leaves as the
// set writes to while the view is alive.
type View struct {
	layout Layout
	n      int
	v      viewCore
}

// viewCore is what each layout's view provides.
type viewCore interface {
	each(fn func(m []byte, s float64) bool)
	encode(w *bufio.Writer) error
}

// view is one layout's view: the live run of each of the set's leaves,
// in order, and the arena (its chunk list). A set of one leaf, as most
// small sets are, keeps its run in one, so that its view is one
// allocation.
type view[M member, S score] struct {
	ar   arena
	runs []run[M, S]
	one  [1]run[M, S]
}

// run is a leaf's live entries: its arrays sliced to [lo, hi).
type run[M member, S score] struct {
	keys   []M
	scores []S
	ents   []uint64
}

// leaf returns the run as a leaf, for the leaf's accessors.
func (r *run[M, S]) leaf() leaf[M, S] {
	n := len(r.keys)
	if okeyLeaves[M, S]() {
		n = len(r.ents)
	}
	return leaf[M, S]{keys: r.keys, scores: r.scores, ents: r.ents, hi: int32(n)}
}

// Snapshot returns a view of the set as it is now. The set must not
// change during the call; afterwards it may.
func (z *ZSet) Snapshot() *View {
	return &View{layout: z.layout, n: z.c.len(), v: z.c.snapshot()}
}

// Layout returns the layout the set had.
func (v *View) Layout() Layout { return v.layout }

// Len returns the number of members the set had.
func (v *View) Len() int { return v.n }

// Each calls fn for every member in rank order, with its score, until fn
// returns false. The member's bytes are valid only during the call.
func (v *View) Each(fn func(m []byte, s float64) bool) { v.v.each(fn) }

// EncodeTo writes the view in the snapshot encoding (encode.go): what
// EncodeTo of the set wrote when the view was taken.
func (v *View) EncodeTo(w io.Writer) error {
	return encodeSet(w, v.layout, v.n, v.v.encode)
}

func (c *zcore[M, S, V]) snapshot() viewCore {
	v := &view[M, S]{ar: c.ar}
	v.ar.chunks = slices.Clone(c.ar.chunks)
	share := func(l *leaf[M, S]) {
		l.shared = true
		r := run[M, S]{}
		if okeyLeaves[M, S]() {
			r.ents = l.ents[l.lo:l.hi]
		} else {
			r.keys, r.scores = l.keys[l.lo:l.hi], l.scores[l.lo:l.hi]
		}
		v.runs = append(v.runs, r)
	}
	if c.height == 0 {
		if c.rootLeaf != nil {
			v.runs = v.one[:0]
			share(c.rootLeaf)
		}
		return v
	}
	// The leaves are reached from the lowest branches' arrays rather than
	// by their links: the loads are independent, so the CPU overlaps
	// their cache misses (10,000,000 members are 25,000 leaves).
	var lowest []*branch[M, S]
	var down func(b *branch[M, S], d int)
	down = func(b *branch[M, S], d int) {
		if d == c.height-1 {
			lowest = append(lowest, b)
			return
		}
		for _, k := range b.kids[:b.n] {
			down(k, d+1)
		}
	}
	down(c.root, 0)
	n := 0
	for _, b := range lowest {
		n += b.n
	}
	v.runs = make([]run[M, S], 0, n)
	for _, b := range lowest {
		for _, l := range b.leaves[:b.n] {
			share(l)
		}
	}
	return v
}

func (v *view[M, S]) each(fn func(m []byte, s float64) bool) {
	var buf []byte
	if kindOf[M]() != MemberBytes {
		buf = make([]byte, 0, 40)
	}
	for i := range v.runs {
		l := v.runs[i].leaf()
		for j := range l.n() {
			m := l.key(j)
			var text []byte
			if kindOf[M]() == MemberBytes {
				text = v.ar.get(*asRef(&m))
			} else {
				text = appendText(buf[:0], m, &v.ar)
			}
			if !fn(text, float64(l.score(j))) {
				return
			}
		}
	}
}

func (v *view[M, S]) encode(w *bufio.Writer) error {
	var buf []byte
	for i := range v.runs {
		l := v.runs[i].leaf()
		if err := encodeLeaf(w, &l, &v.ar, &buf); err != nil {
			return err
		}
	}
	return nil
}

// encodeSet writes a set's encoding: its header, then its leaves through
// body.
// A writer that is a *bufio.Writer already (a keyspace's) is written to
// directly: a snapshot of many small sets allocates no buffer per set.
func encodeSet(w io.Writer, l Layout, n int, body func(*bufio.Writer) error) error {
	bw, ok := w.(*bufio.Writer)
	if !ok {
		bw = bufio.NewWriter(w)
	}
	hdr := []byte{encodingVersion, byte(l)}
	hdr = binary.AppendUvarint(hdr, uint64(n))
	if _, err := bw.Write(hdr); err != nil {
		return err
	}
	if err := body(bw); err != nil {
		return err
	}
	if ok {
		return nil
	}
	return bw.Flush()
}
