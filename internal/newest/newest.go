// Package newest keeps the newest entries of a log that grows at one end
// and is cut at the other, as the slow log and the ACL log are: at most a
// configured number, oldest first.
//
// Entries are appended to a slice; those cut from its front are cleared
// (so that nothing they point to is kept) and skipped, and the entries
// kept are moved to the front once as many were cut as are kept. A log
// that is full, as it stays while every command is slow, so costs the
// same per entry whatever number it keeps, where moving the kept entries
// at every cut cost that number each time.
package newest

// Log is the log, oldest first. The zero Log is empty. It is not safe for
// concurrent use: its owner locks it.
type Log[T any] struct {
	s    []T // s[head:] is the log
	head int
}

// Entries returns the log, oldest first. The slice is the log's own: its
// entries may be changed or reordered in place, until the next Add, Keep
// or Reset.
func (l *Log[T]) Entries() []T { return l.s[l.head:] }

// Len returns the number of entries.
func (l *Log[T]) Len() int { return len(l.s) - l.head }

// Add appends v, then keeps the newest n entries (Keep).
func (l *Log[T]) Add(v T, n int) {
	l.s = append(l.s, v)
	l.Keep(n)
}

// Keep cuts the oldest entries beyond the newest n.
func (l *Log[T]) Keep(n int) {
	if over := l.Len() - max(n, 0); over > 0 {
		clear(l.s[l.head : l.head+over])
		l.head += over
	}
	if l.head > 0 && l.head >= l.Len() {
		k := copy(l.s, l.s[l.head:])
		clear(l.s[k:])
		l.s, l.head = l.s[:k], 0
	}
}

// Reset empties the log.
func (l *Log[T]) Reset() {
	clear(l.s)
	l.s, l.head = l.s[:0], 0
}
