package node

import (
	"errors"
	"strings"

	"github.com/goblindb/goblin/raftfsm"
)

// Errors returned by the write and read paths.
var (
	// ErrNotLeader: this node is not the leader and cannot forward.
	ErrNotLeader = errors.New("node is not the leader")
	// ErrNoLeader: no leader is known (election in progress or no quorum).
	ErrNoLeader = errors.New("no leader")
	// ErrTimeout: the operation did not complete within its deadline.
	ErrTimeout = errors.New("timed out")
	// ErrUncertain: leadership changed while a write was in flight, and
	// its outcome could not be learned within OutcomeWait (no leader, or
	// this node cut off from it): it may or may not have been applied.
	// Between nodes it is also a leader's answer to a forwarded entry in
	// flight when it lost leadership; the follower then learns the outcome
	// itself (Pending.resolve).
	ErrUncertain = errors.New("the write's outcome is unknown: leadership changed while it was in flight")
	// ErrNotApplied: leadership changed while a write was in flight, and
	// it was not committed: it never takes effect.
	ErrNotApplied = errors.New("leadership changed before the write was committed: it was not applied")
	// ErrClosed: the node is shutting down.
	ErrClosed = errors.New("node is shutting down")
	// ErrStale: a READONLY read on a follower that has not heard from a
	// leader recently enough.
	ErrStale = errors.New("replica is stale")
	// ErrBadEntry: a forwarded entry that is not a valid command entry.
	ErrBadEntry = errors.New("invalid forwarded entry")
	// ErrNoSuchNode: a membership change names a node that is not in the
	// configuration.
	ErrNoSuchNode = errors.New("no such node in the cluster configuration")
	// ErrOOM: used memory is above maxmemory, and the command may grow it
	// (memory.go).
	ErrOOM = errors.New("used memory is above maxmemory")
	// ErrLogWrite: the Raft log cannot be written (a full disk, an I/O
	// error), so writes are refused until it can; the error is a
	// *LogWriteError (diskfault.go).
	ErrLogWrite = errors.New("error writing to the Raft log")
	// ErrEntryTooLarge: the write's log entry would be larger than one
	// entry may be (MaxEntryBytes); it is refused before it is proposed.
	ErrEntryTooLarge = errors.New("the write is too large for one Raft log entry")
)

// wireCodes name the sentinels on the internal forwarding protocol: a
// leader answers a forwarded request that failed with "-CODE text", and
// the follower turns the code back into the sentinel.
var wireCodes = []struct {
	code string
	err  error
}{
	{"NOTLEADER", ErrNotLeader},
	{"NOLEADER", ErrNoLeader},
	{"TIMEOUT", ErrTimeout},
	{"UNCERTAIN", ErrUncertain},
	{"NOTAPPLIED", ErrNotApplied},
	{"CLOSED", ErrClosed},
	{"STALE", ErrStale},
	{"BADENTRY", ErrBadEntry},
	{"NOSUCHNODE", ErrNoSuchNode},
	{"OOM", ErrOOM},
	{"FAILED", raftfsm.ErrEntryFailed},
	{"LOGWRITE", ErrLogWrite},
	{"TOOLARGE", ErrEntryTooLarge},
	{"NOTFOLLOWING", ErrNotFollowing},
}

// WireError returns the error line (without '-' and CRLF) a leader sends
// for err on the internal protocol, and whether err is a sentinel.
func WireError(err error) (string, bool) {
	var lw *LogWriteError
	if errors.As(err, &lw) {
		return "LOGWRITE " + lw.Reason(), true
	}
	for _, w := range wireCodes {
		if errors.Is(err, w.err) {
			return w.code + " " + w.err.Error(), true
		}
	}
	return "", false
}

// FromWire returns the sentinel an error line from the internal protocol
// names, or nil if it names none.
func FromWire(line string) error {
	code, rest, _ := strings.Cut(line, " ")
	if code == "LOGWRITE" {
		return &LogWriteError{Err: errors.New(rest)}
	}
	for _, w := range wireCodes {
		if code == w.code {
			return w.err
		}
	}
	return nil
}
