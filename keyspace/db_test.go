package keyspace

import (
	"fmt"
	"slices"
	"testing"
)

// Each visits keys in SCAN order, whatever order they were written in, so
// a KEYS applied through the log answers alike on every node; expired
// keys are skipped, and returning false stops the walk.
func TestEachOrder(t *testing.T) {
	a, b := New(), New()
	const n = 200
	for i := range n {
		put(a, fmt.Sprintf("key:%d", i), 0, uint64(i+1))
		put(b, fmt.Sprintf("key:%d", n-1-i), 0, uint64(i+1))
	}
	put(a, "gone", 50, n+1)
	put(b, "gone", 50, n+1)
	walk := func(ks *Keyspace, stopAfter int) []string {
		var keys []string
		ks.DB(0).Each(100, func(k string, _ *Entry) bool {
			keys = append(keys, k)
			return len(keys) < stopAfter
		})
		return keys
	}
	ka, kb := walk(a, n+1), walk(b, n+1)
	if len(ka) != n || slices.Contains(ka, "gone") {
		t.Fatalf("Each visited %d keys (the expired one: %v), want the %d unexpired", len(ka), slices.Contains(ka, "gone"), n)
	}
	if !slices.Equal(ka, kb) {
		t.Fatalf("two databases with the same keys, written in opposite orders, were walked in different orders:\n%v\n%v", ka[:10], kb[:10])
	}
	var scanned []string
	for cursor := uint64(0); ; {
		cursor = a.DB(0).Scan(cursor, 10, func(k string, _ *Entry) {
			if k != "gone" {
				scanned = append(scanned, k)
			}
		})
		if cursor == 0 {
			break
		}
	}
	if !slices.Equal(ka, scanned) {
		t.Errorf("Each's order is not SCAN's")
	}
	if got := walk(a, 3); !slices.Equal(got, ka[:3]) {
		t.Errorf("stopped after 3: %v, want %v", got, ka[:3])
	}
}
