package packed

import (
	"errors"
	"strings"
)

// Layout names how a ZSet stores its members and scores.
type Layout uint8

// The seven layouts. The numeric values are part of the snapshot format:
// never renumber them.
const (
	Standard     Layout = iota // binary-safe members, float64 scores
	Int32Float32               // INT32 members, FLOAT32 scores
	Int32Float64               // INT32 members, FLOAT64 scores
	Int64Float32               // INT64 members, FLOAT32 scores
	Int64Float64               // INT64 members, FLOAT64 scores
	UUIDFloat32                // UUID members, FLOAT32 scores
	UUIDFloat64                // UUID members, FLOAT64 scores
	numLayouts
)

var layoutNames = [numLayouts]string{
	"standard",
	"int32:float32", "int32:float64",
	"int64:float32", "int64:float64",
	"uuid:float32", "uuid:float64",
}

// ErrLayout is returned by ParseLayout for a name that is not a layout.
var ErrLayout = errors.New("unknown layout")

// String returns the layout's name as users write it, e.g. "int32:float32".
func (l Layout) String() string {
	if l < numLayouts {
		return layoutNames[l]
	}
	return "invalid"
}

// Valid reports whether l is one of the seven layouts.
func (l Layout) Valid() bool { return l < numLayouts }

// Packed reports whether l is one of the six packed layouts.
func (l Layout) Packed() bool { return l != Standard && l < numLayouts }

// ParseLayout parses a layout name (case-insensitive), as String writes it.
func ParseLayout(s string) (Layout, error) {
	for i, n := range layoutNames {
		if strings.EqualFold(s, n) {
			return Layout(i), nil
		}
	}
	return 0, ErrLayout
}

// MemberKind is the member half of a layout.
type MemberKind uint8

// Member kinds.
const (
	MemberBytes MemberKind = iota
	MemberInt32
	MemberInt64
	MemberUUID
)

// Member returns the member kind of the layout.
func (l Layout) Member() MemberKind {
	switch l {
	case Int32Float32, Int32Float64:
		return MemberInt32
	case Int64Float32, Int64Float64:
		return MemberInt64
	case UUIDFloat32, UUIDFloat64:
		return MemberUUID
	}
	return MemberBytes
}

// Float32Scores reports whether the layout stores scores as FLOAT32.
func (l Layout) Float32Scores() bool {
	return l == Int32Float32 || l == Int64Float32 || l == UUIDFloat32
}

// widenMember returns the layout with INT32 members widened to INT64.
func (l Layout) widenMember() Layout {
	switch l {
	case Int32Float32:
		return Int64Float32
	case Int32Float64:
		return Int64Float64
	}
	return l
}

// widenScore returns the layout with FLOAT32 scores widened to FLOAT64.
func (l Layout) widenScore() Layout {
	switch l {
	case Int32Float32:
		return Int32Float64
	case Int64Float32:
		return Int64Float64
	case UUIDFloat32:
		return UUIDFloat64
	}
	return l
}
