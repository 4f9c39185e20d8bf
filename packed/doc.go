// Package packed holds Goblin's sorted-set data structures.
//
// A ZSet maps members to float64 scores and keeps them ordered by
// (score, member). It has one of seven layouts: the standard layout
// (binary-safe members, float64 scores, ties ordered by member bytes exactly
// as Redis orders them: memcmp, then length) and six packed layouts whose
// members are INT32, INT64 or UUID values and whose scores are FLOAT32 or
// FLOAT64 (ties ordered numerically by member, UUIDs by their 16 bytes).
// This package knows nothing of RESP, Raft or keys: it is a pure data
// structure, safe for use by one goroutine at a time (callers serialize;
// reads never write to the set, so concurrent readers are safe too).
//
// # Shape
//
// A set is two structures that agree: an order-statistic B+tree of
// (score, member) entries, which answers everything about order (rank,
// select, ranges, counts by score or member), and a hash index from member
// to score, which answers "is m here, and with what score" in one probe and
// tells the tree which key to look for. Every operation that names a member
// goes index first; every operation that names a rank or a score bound goes
// straight to the tree.
//
// # One generic core
//
// zcore[M, S, V] (core.go) is the only implementation. S is float32 or float64.
// M is the member's in-memory form: int32, int64, uuid (two big-endian
// uint64 halves, so comparing halves orders UUIDs by their bytes) or sref
// (a standard member's offset in the set's byte arena). The seven layouts
// are seven instantiations (makers in core.go) and nothing else. The few
// places that differ by member kind (parse, format, compare, hash, encode:
// member.go) switch on kindOf[M](), which is computed from the size and
// alignment of M and so is a compile-time constant in each instantiation:
// the Go compiler stencils one body per shape, folds the switch, and an
// INT32 member comparison compiles to a single CMPL. Scores are compared
// with the native float operators, which the type set allows directly.
// Hot searches are specialized per kind at the top (search.go) so that the
// inner loops compare native integers inline instead of calling through a
// comparator.
//
// # The tree
//
// Branches (branch.go) hold up to 64 children with, per child, its entry
// count and its lower fence, a (score, member) split point: every key of
// child i is at or above fence i and below fence i+1. Counts make the tree
// an order-statistic tree: rank sums the counts left of the descent path,
// select walks the counts down, both O(log n). Fences are split points, not
// live keys, so removing an entry never touches the branches above it
// except to decrement counts.
//
// Leaves (leaf.go) hold up to 512 entries (the default; NewWithCapacity
// takes 4 to 65,536) in pointer-free arrays. INT32/FLOAT32 leaves hold one
// array of order keys (okey.go): each entry is one uint64 whose unsigned
// order is the (score, member) order, so a search loads one word per probe
// and compares once, and a shift moves one array. Order keys give -0 and +0
// one key (Redis orders them as one score), so that layout does not store
// -0 (see Widening). The other layouts hold two arrays, members and scores:
// split arrays mean no padding, where an interleaved INT32/FLOAT64,
// INT64/FLOAT32 or standard entry would carry 4 bytes of it. Standard
// leaves hold a third array, each member's first two bytes (see Searches).
// Because the arrays contain no pointers, the garbage collector never
// scans them: what it scans is the leaf header (four slice headers,
// those its layout does not use nil, two neighbour links and a flag for
// snapshot views, in a 128-byte allocation),
// one per up to 512 members, and the branches. A leaf's live entries are
// [lo, hi), a run that
// floats inside the arrays: an insertion or removal shifts whichever side of
// its position is shorter, so removing the first entry (ZPOPMIN,
// sequential deletion) moves nothing, and a random update moves a quarter
// of a leaf on average instead of half. A set starts with one leaf of
// capacity 8 that doubles up to the tree's leaf capacity, so small sets stay
// small.
//
// # Update policy
//
// A common design keeps each leaf as a sorted run plus an unsorted dirty
// tail of about sqrt(capacity) records merged in when full. Goblin keeps
// a sorted floating run instead, for three reasons. Reads stay pure and
// logarithmic: rank, select and range iterate a sorted run directly, with
// no merge of a tail on every read (and no write on a read path, which
// would race with concurrent readers). A rescore that stays within its
// leaf is one search for the new position and one shift of the entries
// between the old and the new position (leaf.move), which for the small
// increments of counters and leaderboards is a few entries. And shifting
// is not where the time goes: in CPU profiles of the random-rescore
// workload memmove is 7 to 11% of the time, while the binary searches
// of leaves and branches are about half. A dirty tail saves a search and a
// shift on insertion but adds a tail scan to every later lookup in the
// leaf; it cannot beat the searches it does not remove.
//
// Insertion into a full leaf first moves entries into a sibling that has
// at least capacity/16 free slots (half of its free space; a smaller
// standard leaf counts the room it can grow into). When both
// siblings are full too, the leaf and a sibling are spread over three
// leaves, each about two thirds full (a B*-tree split), rather than split
// into two half-full leaves. Appending past the last leaf (or prepending
// before the first) splits at the insertion point instead, so ascending or
// descending loads fill leaves completely. Removal leaves a leaf alone
// until it is under two thirds full; then it is emptied into both siblings
// when the three fit in two leaves (with 1/8 of a leaf of slack), merged
// with one sibling when the two fit in one, or refilled from a sibling so
// both are at least half full; a refill that could not bring the leaf
// back to two thirds waits until it is under half full (otherwise a queue
// drained from its front moved an entry at every removal). Branches merge
// and redistribute the same way, and a root with one child is collapsed.
// RemoveRange works a leaf at a time: it removes the part of each leaf in
// the range with one shift, and a leaf that empties is dropped by the same
// merge step.
//
// Standard leaves that hold less than three quarters of a full leaf use
// arrays of 384 entries instead of 512 (both are exact allocation size
// classes for all three arrays): a split makes its leaves that small, a
// leaf grows to full size when it fills, and a full-size leaf that falls
// below 352 entries (a sixteenth of a leaf short of 384, so that a few
// insertions do not grow it straight back) moves to the smaller arrays,
// unless it is the first or the last leaf: there queues take entries
// until a sibling refills the leaf, which would only grow it back.
// Packed layouts keep full-size leaves: they are well within their memory
// target, and the copies would cost their tied increments 9%.
//
// Leaf fill decides most of the memory. Measured on the Zipf increment
// replay of memory_test.go (279,458 members, 2,000,000 increments), in
// bytes per member for INT32/FLOAT32 and standard:
//
//	refill below 1/4, pairwise merges only        57% full   25.2   44.7
//	refill below 1/2, three-into-two merges       75% full   21.6   39.4
//	refill below 2/3, three-way splits, and the
//	  standard scores moved into the arena        79% full   22.7   39.4
//	the same with order keys (96-byte leaf
//	  headers, fence keys in the branches)       79% full   22.8   39.4
//	member prefixes in standard leaves (120-
//	  byte headers), 64 KiB arena chunks, and
//	  384-entry standard leaves           79% / 86% full   22.9   38.7
//
// (The last two rows' index is at a less favourable point of its growth
// sawtooth, 74% loaded against 85%, which costs INT32/FLOAT32 about 1.6
// bytes per member; see below. In the last row, the prefixes cost standard
// sets 2.5 bytes per member, the chunks saved 1.7 and the smaller leaves
// 1.3.) Small sets (one leaf, at most 8 members) have no index at all: a
// lookup scans the leaf, and a one-member INT32/FLOAT32 set takes 376
// bytes in all.
//
// # The index
//
// The member index (swiss.go) is a Swiss-style open-addressing table:
// groups of eight slots, each group one pointer-free struct holding eight
// control bytes (one uint64), eight members and eight scores. A control
// byte is EMPTY, DELETED or, for a member, a high bit over the low seven
// bits of the member's hash. A
// lookup maps the 64-bit hash to a home group by multiply-shift (so the
// group count need not be a power of two and the table grows by 1.5x, not
// 2x), matches the fingerprint against all eight bytes at once with SWAR
// arithmetic, compares members only where fingerprints match, and probes
// the following groups until it finds the member or a group with an EMPTY
// byte. The load limit is 7/8 counting tombstones; a growth leaves it at
// 7/12; a table under 1/8 full shrinks. So the index's load, and with it
// INT32/FLOAT32 memory (9 bytes per slot, leaves 8 bytes per entry), moves
// in a sawtooth: at 79% leaf fill that is, by arithmetic, about 21 bytes
// per member just before the index grows and about 26 just after. Growing
// by 2x would let the load fall to 44% and the cost rise to about 31. An erase in a group that still has
// an EMPTY byte writes EMPTY rather than a tombstone (no probe ever passed
// through such a group).
//
// Lookups are prepared: find returns either the member's slot or the
// vacant slot where it would be inserted, in one probe sequence. An update
// reads the old score through the slot and writes the new one after the
// tree has moved the entry; an insertion reserves the vacant slot (growing
// the table first if needed, which refreshes the slot) and publishes the
// member into it only after the tree insertion; a removal erases the slot
// it found, without a second probe.
//
// A resize (growing, shrinking, or dropping tombstones) is incremental,
// as in Redis's dictionaries: the new table is allocated and the members
// move into it a few old groups at a time, at the start of every later
// insertion, update or no-op write and at every removal, never on a read
// (reads may run concurrently). Meanwhile a lookup searches both tables,
// the old one first when the member's old home group has not moved yet.
// The step is sized so that a resize ends within a sixteenth of the
// insertions the new table can take, five groups a command after growth;
// a bulk load finishes each resize at once, as one long command anyway.
// EMPTY is the zero byte, so a new table needs no writing before use and
// its pages are touched only as members arrive. Growing to 4,000,000
// members, the slowest single insertion took 166 to 173 ms (INT32/FLOAT32)
// and 411 to 458 ms (standard) when a resize moved every member at once;
// it takes 5 to 12 ms now (BenchmarkGrowth). The cost is in the means:
// 1 to 6% on insertions and removals, while a resize's lookups probe two
// tables (medians of five alternated rounds of the packed workloads).
//
// Hashing (hash.go) matters more than anything else here: an identity hash
// on sequential IDs is 3.7x slower. Integer members go through
// the splitmix64 finalizer, a full-avalanche mixer (each input bit flips
// each output bit with probability one half; TestMix64Avalanche), keyed
// with a per-process random seed; UUIDs mix both halves; standard members
// use hash/maphash. 100,000 sequential IDs reach as many groups as random
// keys would (TestHashSpreadsSequentialIDs).
//
// # The standard layout
//
// Standard members are binary-safe byte strings of any length, stored
// pointer-free in one arena per set (arena.go): records of the member's
// score, a uvarint length and the bytes, referred to by 4-byte offsets.
// Leaves, fences and index slots hold offsets, so the member bytes are
// never copied by a rescore; leaves and fences also hold each member's
// first two bytes, so a comparison reads the bytes only when scores and
// those two bytes tie. The index keeps no score for standard members: a lookup must read
// the record to compare the bytes anyway, and the score sits beside them,
// so an index slot costs 5 bytes instead of 13. That makes a standard set's
// memory depend little on where its index is in its growth sawtooth (the
// index is 7 of 39 bytes per member rather than 17). The arena is a list
// of 64 KiB chunks, of which only the last grows (doubling, by copying); a
// record never crosses a chunk's end, and one longer than a chunk has a
// buffer of its own. So its slack is at most half a chunk, where one
// growing buffer (by an eighth at a time, before chunks) left 12% of the
// arena unused just after each growth; and growing never copies more than
// a chunk. Offsets limit a set's member storage to 4 GiB (ErrTooLarge).
//
// A removed member's record becomes garbage, counted per chunk. When
// garbage exceeds half the arena (reclaim.go), a set with at most 512 KiB
// of live records is compacted: its members' records are copied into a
// fresh arena and the index's slots pointed at the copies (each old record
// is overwritten with its copy's offset, which the slot reads: no hashing;
// a rebuild of the index took a quarter longer). A larger set evacuates
// one chunk per removal instead, the one with the most garbage (at least
// half of it): each live record in it, recognized by the index slot its
// bytes hash to referring to it, is copied to the tail, its slot and its
// leaf entry (found by a descent) pointed at the copy, and the chunk's
// number is reused. A fence that referred into either is pointed at the
// least key to its right, a live member's record, so fences never keep
// copies of their own. Draining a standard set of 4,000,000 members, the
// slowest removal took 121 to 145 ms when every reclaim compacted the
// whole arena, and 6.6 to 12.7 ms now (BenchmarkGrowth), and sequential
// deletion of 200,000 members takes 15% less time.
//
// # The small form
//
// A standard set starts in a form of its own (small.go): one pointer-free
// byte slice of its entries in (score, member) order, each an 8-byte score,
// a one-byte length and the member, which every operation scans, as Redis
// keeps a small set in a listpack. The set moves to the tree and index,
// for good, when it would hold more than 128 members or a member longer
// than 64 bytes (Redis's listpack limits); a decoded set of up to 128
// members takes the small form again when they fit it. Most keys of a
// Redis-style keyspace are small sets (a rate limiter's window or a queue
// per user), and the tree costs a one-member set about 470 bytes: the
// core, a leaf header and its arrays, an arena chunk. In the small form a
// one-member set takes 88 bytes and one of ten six-byte members 224 (the
// tree: 472 and 952) in two allocations, the set with its small header
// and the slice, which a lookup scans, instead of half a dozen. A snapshot shares the slice, which the set copies
// before its next write. Both forms encode alike and answer alike
// (TestSmallMatchesTree).
//
// LexRank is meaningful when every score is equal, as Redis's lex commands
// assume; with several scores the members are not in order, and a search
// by halving finds one of several boundaries. Which one must not depend on
// the structure: a node restored from a snapshot holds a set bulk-loaded,
// or in the small form, where the node that applied every write holds a
// tree of another shape, and ZREMRANGEBYLEX is applied by every node. So
// with several scores both forms halve ranks 0 to n, the tree selecting
// each rank it probes (O(log² n)); with one score the tree descends as
// for any search (TestLexRankIndependentOfShape).
//
// # Widening
//
// Packed keys never lose precision silently. A member that is a canonical
// integer outside INT32 widens an INT32 key to INT64; a score (after an
// increment) that FLOAT32 cannot hold exactly widens a FLOAT32 key to
// FLOAT64, and so does -0 in an INT32/FLOAT32 key, whose order keys hold
// one zero (okey.go; a snapshot from before order keys that holds -0 there
// decodes widened); both can happen at once. Widening happens only when the
// operation will store the value: an NX, XX, GT or LT condition that skips
// the operation never widens. The whole set is converted by a bulk load
// (both orders are the same, so the entries stream across in order). A
// member the layout cannot hold at all (text in an integer layout, a
// non-canonical integer such as "007", "+1", "-0" or " 1", anything but a
// canonical lowercase UUID in a UUID layout) is refused with ErrMember and
// the set is unchanged. ±Inf are valid scores in every layout; NaN never
// is (ErrNaN, unchanged). -0 and +0 are equal scores (ties by member), and
// storing 0 over -0 is no change, as in Redis, which compares with ==.
//
// # Searches
//
// Nearly all of the time of an update is search: a probe of the index,
// then searches of a branch and a leaf for the old key, of the leaf for the
// new position, and, when the entry changes leaves, of a branch and a leaf
// again. Searches compare scores with the float operators and members only
// where scores tie, with the member comparison inlined per kind.
//
// On random keys a binary search mispredicts half of its branches, and
// that, not memory, is its cost: 56 ns on a random 512-entry INT32/FLOAT32
// leaf that sits in L1 (the CPU is a 2.1 GHz AMD EPYC). A branch-free
// binary search (each level a load, compares turned into 0/1 by SETcc, a
// masked add) is no faster alone, because each level waits for the last.
// Two things are (search.go):
//
//   - Four-way steps for one key (pairBound): three branch-free compares
//     at the quarter points per step, their results summed, so a leaf
//     takes five dependent steps instead of nine levels: 41 ns. A key at
//     either end of the run is answered before the loop, so removing or
//     appending in order stays as cheap as the perfectly predicted binary
//     search it replaces.
//   - Two keys at once for a rescore (pairBound2): the old key and the new
//     one are independent, so rescore (tree.go) descends to both in
//     lockstep and searches both leaves together with the same branch-free
//     four-way steps; the two chains overlap, and both cost little more
//     than one (50 ns for the pair on a random leaf, against 112 for two
//     branchy binary searches).
//
// Measured on the INT32/FLOAT32 workloads (thread CPU, medians of six
// alternated rounds): the paired searches took same-leaf rescore from 188
// to 145 ns, random rescore from 423 to 276 and tied increment from 352 to
// 315; the four-way searches then took delete/reinsert down by a fifth and
// rank by a seventh, and four-way steps in the pair a few percent more off
// the rescores. An earlier counting search (eight strided samples per
// level) was slower in the full workloads, because it handled ties and
// leaf ends in extra passes.
//
// INT32/FLOAT32 sets then search order keys (okey.go) with the same steps
// (lowerBound, okeyBound2): leaves hold nothing else, and branches keep
// each fence's key beside its score and member. One load and one compare
// per probe instead of two loads and three compares took a pair of leaf
// searches from 42 to 26 ns, and the workloads' random rescore from 176 to
// 144 ns and tied increment from 189 to 153 (leaves, then branches; five
// alternated rounds each).
//
// Standard members used to keep the branchy binary search, whose member
// comparisons read the arena (a dependent load, a length decode and a
// bytes.Compare whose branches depend on the lengths) wherever scores tie;
// a branch-free score search followed by the ties was slower still
// (insertion +11%, tied increment +16%), and so were an 8-byte prefix
// compare through the record and counts through short runs of ties.
// What took the arena out of the searches is a copy
// of each member's first two bytes, big-endian and zero-padded, in the
// leaves and fences (memberPrefix): padding keeps the order, so
// prefix(a) <= prefix(b) whenever a <= b, and a search orders entries by
// (score, prefix) first. Those are two native arrays, so standard searches
// take the integer layouts' branch-free four-way and paired steps
// (pairBound, pairBound2 over the prefixes), rescores descend to both keys
// in lockstep as theirs do, and member bytes are compared only among the
// entries that tie on score and prefix (tieFix: one by one through four,
// then a binary search to the end of the run); random members of up to 10
// bytes almost never tie on both. Members that share a long prefix
// ("user:...") tie on every prefix and are compared by bytes as before;
// they pay the prefix search on top, a few nanoseconds. A member already
// in the set is still found without reading any bytes (leafFind, refFind):
// the index gives its score and its arena reference, the paired search
// the first entry at its score and prefix, and a scan of the references
// from there (four compares at a time, up to 1,024 of them; a leaf entry
// refers to its member's one record, so the first match is the member)
// finds it. Before prefixes, that scan started at the first entry of the
// score, which took the standard rank from 332 to 253 ns, same-leaf
// rescore 277 to 232, random rescore 684 to 619, sequential deletion 241
// to 205 and delete/reinsert 980 to 903 (thread CPU, medians of four
// alternated rounds); scanning whole runs rather than searching runs over
// 64 by member bytes then took tied increments from 502 to 433.
//
// The prefixes, the arena chunks and the smaller leaves together (three
// alternated rounds against the build before them, thread CPU) took
// standard same-leaf rescores from 155 to 131 ns, tied increments from 456
// to 290, random rescores from 384 to 255, delete/reinsert from 556 to 457,
// insertion from 402 to 387 and rank from 162 to 146, and cost sequential
// deletion 32% (105 to 138: the smaller leaves' copies and compaction
// through chunks) and no-op updates 11% (44 to 49: a record is found
// through the chunk list). A one-byte prefix costs 1.3 bytes per member
// less and left tied increments at 330 ns (a compare through the arena in
// most of them); keeping full-size standard leaves left 40.0 bytes per
// member on the replay, over the limit, though it saved tied increments
// 8%.
//
// A removal first looks at the first entry of the first leaf, reached by
// following first children down (a load per level, no search): queues
// and sliding windows remove their oldest entry, and then the descent and
// the leaf search are skipped. That took sequential deletion from 54 to
// 47 ns (INT32/FLOAT32) and from 111 to 89 (standard), with the refill
// rule above, and costs random removals about 1% (seven alternated
// rounds).
//
// # Calls and copies
//
// The generic core pays for its calls: the Go compiler does not inline a
// generic method into another generic method's shaped body, so every
// helper is a real call with its spills, and hot paths are written with
// fewer levels (descents search branches directly, leafFind searches the
// leaf itself). Values that cross those calls are passed by pointer where
// a copy would be read back in pieces: the member probe used to be returned
// by value from parsing, and the CPU cannot forward a store to a load of a
// different size, so every lookup stalled on it; parsed in place, a
// standard member's lookup went from 46 to 30 ns and its no-op update and
// sequential deletion took 27% and 17% less time. Integer members are
// parsed eight digits at a time (codec.go, digits8), and a leaf removal or
// insertion at either end of its run skips the copies of nothing (a copy of
// zero elements still calls memmove).
//
// Leaf capacities from 64 to 1,024 performed within the noise of each
// other; 128 and 256 were slower than 512 with the paired searches too.
//
// # Performance
//
// docs/benchmarks.md has the workloads measured against the structure a
// Go developer would otherwise write (a map beside a tidwall/btree of
// (score, member) items), in the same runs: rescores take about 2.1 to 2.6
// times less CPU than that baseline and rank 3.6 to 7.5 times less; a
// no-op update of a standard member takes 1.5 to 1.7 times as long as
// Go's map lookup; standard sets take less than half the baseline's
// memory, INT32/FLOAT32 sets up to a third less. What remains in an update
// is the searches, the leaf shifts, the index probe's cache miss and the
// generic core's calls. Figures within a few percent of each other do not
// order two builds: the same code can move by more than that when other
// functions move in the binary.
//
// # Memory accounting
//
// Bytes (alloc.go) adds up every allocation of a set, each rounded up the
// way the Go allocator really rounds it: to its size class, read from the
// running allocator itself, to whole pages above 32 KiB, and with the
// 8-byte header that Go 1.22+ adds to objects with pointers above 512
// bytes. TestAllocSizeMatchesRuntime checks the rounding against the
// runtime's own count. Stats breaks the total down.
//
// # Snapshots
//
// EncodeTo writes the set leaf by leaf (encode.go documents the format,
// version 2): per leaf a block of scores then members, packed members at
// fixed width. Decode bounds-checks every length, rejects anything out of
// order, duplicated or NaN with ErrCorrupt (never a panic: FuzzDecode), and
// rebuilds the set with the bulk loader (build.go), which fills leaves to
// 7/8 and builds the branches bottom up, with no tree descent per entry.
//
// A Raft snapshot does not copy sets: Snapshot returns a View (view.go),
// a frozen image that another goroutine encodes while the set goes on
// changing. A view holds a copy of each leaf's header, references to the
// leaf's arrays, and the arena's chunk list; it takes about 1 ms for
// 10,000,000 members (25,000 leaves), where Clone's deep copy took 160 ms
// or more with applies waiting. The leaves are marked shared, and every
// write to a leaf's arrays (leaf.own) first copies the arrays of a
// shared leaf and clears the mark: copy on write at leaf granularity, one
// byte tested per write, so the hot paths keep their speed (docs/
// operations.md has the benchmarks). Arena records are never written in
// place where a view reads them (view.go), so the arena is not copied,
// and the index is not part of a view. Memory while a view lives grows by
// the leaves written since it was taken, at most the leaves' arrays once
// over. Clone (clone.go) remains the deep copy, for commands that copy
// a set.
//
// # Checking
//
// Check verifies every invariant in O(n): counts, order, fences, leaf
// links and fill, and that the index holds exactly the tree's members with
// bit-identical scores and consistent control bytes. Tests call it after
// mutations; building with -tags invariants makes every mutation call it.
// The randomized tests run all seven layouts against a plain model (a map
// and a sorted slice), with leaves and branches as small as 4 to grow deep
// trees from a few thousand members, and print their seed
// (GOBLIN_SEED=N replays one). FuzzTree and FuzzDecode are the fuzz targets.
package packed
