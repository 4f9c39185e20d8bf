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
type readGuess struct {
	score int8
	skips uint8 // guesses to wait first since the last probe
}

const (
	// probeEvery bounds the waits between two guesses that read first:
	// where reads find nothing, a read in probeEvery is for nothing.
	probeEvery = 64
	// maxScore bounds the score: a connection that read first for long
	// waits first again after a few empty reads in a row.
	maxScore = 16
)

// readFirst reports whether to read before waiting, after a short read.
func (g *readGuess) readFirst() bool {
	if g.score > 0 {
		return true
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
	}
}
