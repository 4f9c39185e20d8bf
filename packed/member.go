package packed

import (
	"bytes"
	"encoding/binary"
	"math"
	"unsafe"
)

// The member codecs: how each layout's members are represented in the tree
// and the index, compared, hashed, parsed and formatted.
//
// The core is generic over the member type M and the score type S. The four
// member types have distinct sizes or alignments, so kindOf[M]() is a
// compile-time constant in every instantiation and each switch below folds
// to its one live arm: a packed INT32 comparison compiles to one CMPL.

// uuid holds a UUID as two big-endian halves, so that comparing the halves
// as unsigned integers orders UUIDs by their 16 bytes.
type uuid [2]uint64

// sref is a standard-layout member: the little-endian offset of the member's
// record in the set's arena (see arena.go). Its alignment of 1 is what tells
// it apart from int32.
type sref [4]byte

// member is the set of member representations.
type member interface{ int32 | int64 | uuid | sref }

// score is the set of score representations.
type score interface{ float32 | float64 }

// kindOf returns the member kind of M. It is a constant in each
// instantiation, so switches on it cost nothing.
func kindOf[M member]() MemberKind {
	var m M
	switch {
	case unsafe.Sizeof(m) == 16:
		return MemberUUID
	case unsafe.Sizeof(m) == 8:
		return MemberInt64
	case unsafe.Alignof(m) == 1:
		return MemberBytes
	}
	return MemberInt32
}

// The as* helpers reinterpret a member as its concrete type. Each is only
// called in the arm of a kindOf switch that matches M.
func asI32[M member](m *M) *int32 { return (*int32)(unsafe.Pointer(m)) }
func asI64[M member](m *M) *int64 { return (*int64)(unsafe.Pointer(m)) }
func asUUID[M member](m *M) *uuid { return (*uuid)(unsafe.Pointer(m)) }
func asRef[M member](m *M) *sref  { return (*sref)(unsafe.Pointer(m)) }

// refMember returns a standard-layout member reference as M.
func refMember[M member](r sref) M { return *(*M)(unsafe.Pointer(&r)) }

// probe is a member being looked up: packed members parsed into M, standard
// members as their bytes (which need not be in the arena).
type probe[M member] struct {
	m M
	b []byte
}

// parseStatus says whether text can be a member of a layout.
type parseStatus uint8

const (
	parseOK    parseStatus = iota
	parseBad               // never a member of this layout (ErrMember)
	parseWiden             // an integer outside INT32: needs the INT64 layout
)

// parseProbe parses member text for the layout's member kind into p.
// (p is filled in place rather than returned: a returned probe is written
// and read back through the stack in pieces of different sizes, which the
// CPU cannot forward from store to load, and that stall cost the lookup of
// a standard member about a third of its time.)
func parseProbe[M member](text []byte, p *probe[M]) parseStatus {
	switch kindOf[M]() {
	case MemberInt32:
		v, ok := parseCanonicalInt(text)
		if !ok {
			return parseBad
		}
		if v < math.MinInt32 || v > math.MaxInt32 {
			return parseWiden
		}
		*asI32(&p.m) = int32(v)
	case MemberInt64:
		v, ok := parseCanonicalInt(text)
		if !ok {
			return parseBad
		}
		*asI64(&p.m) = v
	case MemberUUID:
		u, ok := parseUUID(text)
		if !ok {
			return parseBad
		}
		*asUUID(&p.m) = uuidOf(u)
	default:
		p.b = text
	}
	return parseOK
}

func uuidOf(b [16]byte) uuid {
	return uuid{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])}
}

func (u uuid) bytes() (b [16]byte) {
	binary.BigEndian.PutUint64(b[:8], u[0])
	binary.BigEndian.PutUint64(b[8:], u[1])
	return b
}

// cmpPacked compares two packed members numerically (UUIDs by their bytes).
func cmpPacked[M member](a, b *M) int {
	switch kindOf[M]() {
	case MemberInt32:
		return cmp3(*asI32(a), *asI32(b))
	case MemberInt64:
		return cmp3(*asI64(a), *asI64(b))
	}
	x, y := asUUID(a), asUUID(b)
	if x[0] != y[0] {
		return cmp3(x[0], y[0])
	}
	return cmp3(x[1], y[1])
}

func cmp3[T int32 | int64 | uint64](a, b T) int {
	if a < b {
		return -1
	}
	if a > b {
		return 1
	}
	return 0
}

// cmpMember compares a probe with a stored member.
func (c *zcore[M, S, V]) cmpMember(p *probe[M], m *M) int {
	if kindOf[M]() == MemberBytes {
		return bytes.Compare(p.b, c.ar.get(*asRef(m)))
	}
	return cmpPacked(&p.m, m)
}

// eqMember reports whether a probe is the stored member m.
func (c *zcore[M, S, V]) eqMember(p *probe[M], m *M) bool {
	if kindOf[M]() == MemberBytes {
		return c.ar.equal(*asRef(m), p.b)
	}
	return p.m == *m
}

// stored fills p with the probe for a member held by the set (in place,
// as parseProbe does, for the same reason).
func (c *zcore[M, S, V]) stored(m M, p *probe[M]) {
	p.m = m
	if kindOf[M]() == MemberBytes {
		p.b = c.ar.get(*asRef(&m))
	}
}

// hashProbe hashes a probe for the index.
func hashProbe[M member](p *probe[M]) uint64 {
	switch kindOf[M]() {
	case MemberInt32:
		return mix64(uint64(int64(*asI32(&p.m))))
	case MemberInt64:
		return mix64(uint64(*asI64(&p.m)))
	case MemberUUID:
		u := asUUID(&p.m)
		return mix64(u[0] ^ mix64(u[1]))
	}
	return hashBytes(p.b)
}

// appendMember appends the canonical text of a stored member.
func (c *zcore[M, S, V]) appendMember(dst []byte, m M) []byte { return appendText(dst, m, &c.ar) }

// appendText appends the canonical text of member m, stored in arena ar
// when it is a standard member.
func appendText[M member](dst []byte, m M, ar *arena) []byte {
	switch kindOf[M]() {
	case MemberInt32:
		return appendInt(dst, int64(*asI32(&m)))
	case MemberInt64:
		return appendInt(dst, *asI64(&m))
	case MemberUUID:
		return appendUUID(dst, asUUID(&m).bytes())
	}
	return append(dst, ar.get(*asRef(&m))...)
}

// memberWidth is the encoded width of a packed member (0: length-prefixed).
func memberWidth[M member]() int {
	if kindOf[M]() == MemberBytes {
		return 0
	}
	var m M
	return int(unsafe.Sizeof(m))
}

// appendPacked appends a packed member in its snapshot form: little-endian
// integers, UUIDs as their 16 bytes.
func appendPacked[M member](dst []byte, m M) []byte {
	switch kindOf[M]() {
	case MemberInt32:
		return binary.LittleEndian.AppendUint32(dst, uint32(*asI32(&m)))
	case MemberInt64:
		return binary.LittleEndian.AppendUint64(dst, uint64(*asI64(&m)))
	}
	u := asUUID(&m).bytes()
	return append(dst, u[:]...)
}

// getPacked reads what appendPacked wrote.
func getPacked[M member](src []byte) (m M) {
	switch kindOf[M]() {
	case MemberInt32:
		*asI32(&m) = int32(binary.LittleEndian.Uint32(src))
	case MemberInt64:
		*asI64(&m) = int64(binary.LittleEndian.Uint64(src))
	case MemberUUID:
		*asUUID(&m) = uuidOf([16]byte(src[:16]))
	}
	return m
}

// scoreWidth is the encoded width of a score.
func scoreWidth[S score]() int {
	var s S
	return int(unsafe.Sizeof(s))
}

func appendScore[S score](dst []byte, s S) []byte {
	if scoreWidth[S]() == 4 {
		return binary.LittleEndian.AppendUint32(dst, math.Float32bits(float32(s)))
	}
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(float64(s)))
}

func getScore[S score](src []byte) S {
	if scoreWidth[S]() == 4 {
		return S(math.Float32frombits(binary.LittleEndian.Uint32(src)))
	}
	return S(math.Float64frombits(binary.LittleEndian.Uint64(src)))
}

// fits reports whether the layout of M and S stores score x exactly: S
// holds it, and it is not -0 in order-key leaves, which store -0 as +0
// (okey.go).
func fits[M member, S score](x float64) bool {
	return float64(S(x)) == x && !(okeyLeaves[M, S]() && x == 0 && math.Signbit(x))
}

// mprefix is what standard leaves and fences keep of each member's bytes
// beside its arena reference: its first two bytes (memberPrefix). One byte
// would cost 1.3 bytes per member less, but random members tie on it often
// enough that tied increments took 330 ns against 290 (doc.go, Searches).
type mprefix = uint16

// maxPrefix is the largest mprefix, whose successor does not exist.
const maxPrefix = 0xffff

// memberPrefix is a standard member's first two bytes, big-endian, padded
// with zeros: memberPrefix(a) <= memberPrefix(b) whenever a <= b, so
// leaves order their entries by (score, prefix) first and read member
// bytes only where both tie.
func memberPrefix(b []byte) mprefix {
	switch len(b) {
	case 0:
		return 0
	case 1:
		return mprefix(b[0]) << 8
	}
	return mprefix(b[0])<<8 | mprefix(b[1])
}

// prefixOf is a probe's memberPrefix (standard members; 0 otherwise).
func prefixOf[M member](p *probe[M]) mprefix {
	if kindOf[M]() != MemberBytes {
		return 0
	}
	return memberPrefix(p.b)
}
