package keyspace

import "github.com/goblindb/goblin/packed"

// Rule gives every new key whose name matches Pattern (a Redis glob) the
// packed Layout.
type Rule struct {
	Pattern string
	Layout  packed.Layout
}

// Rules are checked in order; the first match wins.
type Rules []Rule

// LayoutFor returns the layout a new key named key gets.
func (r Rules) LayoutFor(key []byte) packed.Layout {
	for _, rule := range r {
		if Match([]byte(rule.Pattern), key, false) {
			return rule.Layout
		}
	}
	return packed.Standard
}

// Equal reports whether two rule lists are the same.
func (r Rules) Equal(o Rules) bool {
	if len(r) != len(o) {
		return false
	}
	for i := range r {
		if r[i] != o[i] {
			return false
		}
	}
	return true
}
