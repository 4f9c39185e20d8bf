package packed

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
)

// naive is the interim core: a sorted slice plus a map. Members are kept as
// order-preserving keys (big-endian, sign-flipped integers; UUID bytes;
// standard members as is) so one comparison serves every layout.
type naive struct {
	layout  Layout
	entries []naiveEntry
	index   map[string]float64
	buf     []byte
}

type naiveEntry struct {
	key   string
	score float64
}

func newNaive(l Layout) *naive { return &naive{layout: l, index: map[string]float64{}} }

func (n *naive) key(m []byte) string {
	switch n.layout.Member() {
	case MemberInt32, MemberInt64:
		v, _ := parseCanonicalInt(m)
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], uint64(v)^(1<<63))
		return string(b[:])
	case MemberUUID:
		u, _ := parseUUID(m)
		return string(u[:])
	}
	return string(m)
}

func (n *naive) text(k string) []byte {
	n.buf = n.buf[:0]
	switch n.layout.Member() {
	case MemberInt32, MemberInt64:
		v := int64(binary.BigEndian.Uint64([]byte(k)) ^ (1 << 63))
		n.buf = appendInt(n.buf, v)
	case MemberUUID:
		var u [16]byte
		copy(u[:], k)
		n.buf = appendUUID(n.buf, u)
	default:
		n.buf = append(n.buf, k...)
	}
	return n.buf
}

func less(s1 float64, k1 string, s2 float64, k2 string) bool {
	if s1 != s2 {
		return s1 < s2
	}
	return k1 < k2
}

func (n *naive) find(s float64, k string) int {
	return sort.Search(len(n.entries), func(i int) bool {
		e := n.entries[i]
		return !less(e.score, e.key, s, k)
	})
}

func (n *naive) len() int { return len(n.entries) }

func (n *naive) add(m []byte, score float64, f AddFlags) (AddResult, error) {
	k := n.key(m)
	cur, exists := n.index[k]
	if (f&AddNX != 0 && exists) || (f&AddXX != 0 && !exists) {
		return AddResult{Skipped: true}, nil
	}
	if f&AddIncr != 0 && exists {
		score += cur
		if math.IsNaN(score) {
			return AddResult{}, ErrNaN
		}
	}
	if n.layout.Float32Scores() {
		score = float64(float32(score))
	}
	if !exists {
		i := n.find(score, k)
		n.entries = append(n.entries, naiveEntry{})
		copy(n.entries[i+1:], n.entries[i:])
		n.entries[i] = naiveEntry{k, score}
		n.index[k] = score
		return AddResult{Score: score, Added: true}, nil
	}
	if (f&AddGT != 0 && !(score > cur)) || (f&AddLT != 0 && !(score < cur)) {
		return AddResult{Score: cur, Skipped: true}, nil
	}
	if score == cur && math.Signbit(score) == math.Signbit(cur) {
		return AddResult{Score: cur}, nil
	}
	i := n.find(cur, k)
	n.entries = append(n.entries[:i], n.entries[i+1:]...)
	j := n.find(score, k)
	n.entries = append(n.entries, naiveEntry{})
	copy(n.entries[j+1:], n.entries[j:])
	n.entries[j] = naiveEntry{k, score}
	n.index[k] = score
	return AddResult{Score: score, Changed: score != cur}, nil
}

func (n *naive) remove(m []byte) bool {
	k := n.key(m)
	cur, ok := n.index[k]
	if !ok {
		return false
	}
	i := n.find(cur, k)
	n.entries = append(n.entries[:i], n.entries[i+1:]...)
	delete(n.index, k)
	return true
}

func (n *naive) score(m []byte) (float64, bool) {
	s, ok := n.index[n.key(m)]
	return s, ok
}

func (n *naive) rank(m []byte) (int, float64, bool) {
	k := n.key(m)
	s, ok := n.index[k]
	if !ok {
		return 0, 0, false
	}
	return n.find(s, k), s, true
}

func (n *naive) scoreRank(s float64, inclusive bool) int {
	return sort.Search(len(n.entries), func(i int) bool {
		if inclusive {
			return n.entries[i].score > s
		}
		return n.entries[i].score >= s
	})
}

func (n *naive) lexRank(m []byte, inclusive bool) int {
	k := n.key(m)
	return sort.Search(len(n.entries), func(i int) bool {
		if inclusive {
			return n.entries[i].key > k
		}
		return n.entries[i].key >= k
	})
}

func (n *naive) iterate(start, end int, reverse bool, fn func(m []byte, s float64) bool) {
	if reverse {
		for i := end - 1; i >= start; i-- {
			if !fn(n.text(n.entries[i].key), n.entries[i].score) {
				return
			}
		}
		return
	}
	for i := start; i < end; i++ {
		if !fn(n.text(n.entries[i].key), n.entries[i].score) {
			return
		}
	}
}

func (n *naive) removeRange(start, end int) int {
	for _, e := range n.entries[start:end] {
		delete(n.index, e.key)
	}
	n.entries = append(n.entries[:start], n.entries[end:]...)
	return end - start
}

func (n *naive) bytes() int {
	b := 64 + cap(n.entries)*24
	for _, e := range n.entries {
		b += 2*len(e.key) + 48
	}
	return b
}

func (n *naive) check() error {
	if len(n.entries) != len(n.index) {
		return fmt.Errorf("entries %d != index %d", len(n.entries), len(n.index))
	}
	for i, e := range n.entries {
		if i > 0 && !less(n.entries[i-1].score, n.entries[i-1].key, e.score, e.key) {
			return fmt.Errorf("order broken at %d", i)
		}
		if s, ok := n.index[e.key]; !ok || s != e.score {
			return fmt.Errorf("index mismatch at %d", i)
		}
	}
	return nil
}
