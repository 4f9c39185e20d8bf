// Package packed holds Goblin's sorted-set data structures.
//
// A ZSet maps members to float64 scores and keeps them ordered by
// (score, member). It has one of seven layouts: the standard layout
// (binary-safe members, float64 scores, ties ordered by member bytes exactly
// as Redis orders them) and six packed layouts whose members are INT32, INT64
// or UUID values and whose scores are FLOAT32 or FLOAT64 (ties ordered
// numerically by member, UUIDs by their 16 bytes).
//
// Packed keys never lose precision silently. A member that is a valid
// integer but does not fit INT32 widens an INT32 key to INT64, and a score
// that FLOAT32 cannot hold exactly widens a FLOAT32 key to FLOAT64. A member
// the layout cannot hold at all (text in an integer layout, a non-canonical
// integer such as "007" or "+1", anything but a canonical UUID in a UUID
// layout) is refused with ErrMember and the set is unchanged.
//
// This package knows nothing of RESP, Raft or keys: it is a pure data
// structure, safe for use by one goroutine at a time (callers serialize).
package packed
