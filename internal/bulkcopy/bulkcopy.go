// Package bulkcopy copies large byte slices a piece at a time, so that
// the goroutine copying stays preemptible.
//
// Go's copy and append move bytes with runtime.memmove, which the
// scheduler cannot preempt. Into memory the process has not touched yet,
// every 4 KiB page faults on first write; on virtual machines a fault can
// cost tens of microseconds (40 µs on the machines this project is
// measured on, so a fresh 100 MB buffer fills at about 100 MB/s). A
// client's 100 MB ZADD is copied into fresh buffers several times (the
// query buffer as it grows, the log entry, the log's batch, the request
// forwarded to the leader), each copy holding its thread for up to a
// second. If the garbage collector starts a cycle meanwhile, it waits
// for that goroutine to stop, spinning on another thread, and the timers
// of the processor it spins on do not fire: Raft's heartbeats stopped for
// 580 ms, and the leader lost its lease and its followers their leader
// on every such write. Copied in pieces of Piece bytes, with a function
// call between pieces, the goroutine can be stopped after each piece.
package bulkcopy

import "hash/crc32"

// Piece is the most copied in one go: about 60 µs of copying into warm
// memory, and 2.5 ms into fresh memory at the fault cost above.
const Piece = 256 << 10

// Copy copies src into dst as copy does, a Piece at a time.
func Copy(dst, src []byte) int {
	n := min(len(dst), len(src))
	if n <= Piece {
		return copy(dst, src)
	}
	for at := 0; at < n; at += Piece {
		end := min(at+Piece, n)
		piece(dst[at:end], src[at:end])
	}
	return n
}

// piece is one piece of a Copy; a call the compiler does not inline, so
// the loop around it has a preemption point between pieces.
//
//go:noinline
func piece(dst, src []byte) { copy(dst, src) }

// Append appends src to dst as append does, a Piece at a time; when dst
// must grow, its old bytes are copied the same way.
func Append(dst, src []byte) []byte {
	if len(src) <= Piece && cap(dst)-len(dst) >= len(src) {
		return append(dst, src...)
	}
	n := len(dst)
	if cap(dst)-n < len(src) {
		grown := make([]byte, n, max(n+len(src), 2*cap(dst)))
		Copy(grown, dst)
		dst = grown
	}
	dst = dst[:n+len(src)]
	Copy(dst[n:], src)
	return dst
}

// Checksum is crc32.Update(crc, tab, b), a Piece at a time.
func Checksum(crc uint32, tab *crc32.Table, b []byte) uint32 {
	for len(b) > Piece {
		crc = crc32.Update(crc, tab, b[:Piece])
		b = b[Piece:]
	}
	return crc32.Update(crc, tab, b)
}
