//go:build invariants

package packed

// invariants is set by the invariants build tag (go test -tags invariants):
// every mutation of a ZSet then runs the full O(n) Check and panics on a
// broken invariant, pinning a failure to the operation that caused it.
const invariants = true
