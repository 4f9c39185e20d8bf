//go:build !invariants

package packed

// invariants is false in normal builds; see invariants_on.go.
const invariants = false
