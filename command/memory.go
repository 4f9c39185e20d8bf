package command

import "github.com/goblindb/goblin/keyspace"

// entryOverhead approximates what the keyspace spends per key besides the
// set itself: the map slot, the entry struct and the SCAN-order item.
const entryOverhead = 96

// KeyMemory is the bytes a key costs: its name, bookkeeping and its set's
// exact allocation. MEMORY USAGE and INFO report it.
func KeyMemory(key string, e *keyspace.Entry) int {
	return len(key) + entryOverhead + e.Z.Bytes()
}
