package wire

// After a read that came back short, the next request is either there
// already when the connection reads again, or not yet: a guess.
//
// Waiting for the poller first is right when it is not: the read would
// find the socket empty (a system call for nothing) and the connection
// would wait all the same. That is the common case when clients run on
// other CPUs than the server: redis-benchmark's 50 clients on another
// CPU found the socket empty at 2.00 reads a request before raw mode.
// Reading first is right when the client shares the server's CPU: the
// reply's write woke it, the kernel switched to it, and it sent its next
// request before the server read again. Waiting first then parks the
// goroutine, polls the network and wakes it again for data that was
// there (one client on one CPU: 1.03 epoll_pwait calls a request, where
// reading first makes 0.09 of them and 1.04 reads).
//
// readGuess keeps a score of what the guessed reads found: each that
// found data raises it, each that found the socket empty halves it, and
// the connection reads first while it is above zero. While it is zero it
// waits first, and reads first once every probeEvery guesses, so that a
// connection whose client comes to share the CPU is found out.
//
// A connection that reads first never parks its goroutine while its
// client keeps up, and the others wait: with one thread running Go code,
// the goroutines of other clients are not even woken, since the network
// is polled when the thread runs out of goroutines (or every 10 ms by
// Go's monitor). Measured, one client on the server's CPU replaying
// ZINCRBYs and another on the other CPU sending PINGs: the PINGs took
// 1.2–1.7 ms on average and up to 21 ms, against 0.05–0.08 and 1–4 ms
// when every short read was followed by a wait; still 0.19 ms on average
// with a wait after every two reads first. So only a server's one client
// connection guesses (rawState.Clients), and after maxRun reads first in
// a row it waits first once, which parks it and polls the network for
// the server's other goroutines (Raft's, the node-to-node plane's).
type readGuess struct {
	score int8
	skips uint8 // guesses to wait first since the last probe
	run   uint8 // reads first in a row
}

const (
	// probeEvery bounds the waits between two guesses that read first:
	// where reads find nothing, a read in probeEvery is for nothing.
	probeEvery = 64
	// maxScore bounds the score: a connection that read first for long
	// waits first again after a few empty reads in a row.
	maxScore = 16
	// maxRun bounds the reads first in a row: the network is polled for
	// the server's other goroutines at least once every maxRun+1
	// requests of the one client connection.
	maxRun = 8
)

// readFirst reports whether to read before waiting, after a short read.
func (g *readGuess) readFirst() bool {
	if g.score > 0 {
		if g.run++; g.run <= maxRun {
			return true
		}
		g.run = 0
		return false
	}
	if g.skips++; g.skips < probeEvery {
		return false
	}
	g.skips = 0
	return true
}

// found records what a read made after a short read found: data, or an
// empty socket.
func (g *readGuess) found(data bool) {
	if data {
		g.score = min(g.score+1, maxScore)
	} else {
		g.score /= 2
		g.run = 0
	}
}
