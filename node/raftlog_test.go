package node

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/internal/testutil"
)

// wantLogged runs log on l, given a logger that keeps every level, and
// checks that it wrote msg at level.
func wantLogged(t *testing.T, l raftLogger, msg, level string, log func(raftLogger)) {
	t.Helper()
	var out testutil.SyncBuffer
	l.Logger = hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: &out})
	log(l)
	if !strings.Contains(out.String(), "["+level+"]") || !strings.Contains(out.String(), msg) {
		t.Fatalf("want %s, logged %q", level, out.String())
	}
}

// Raft's warnings on a normal course are information; the same messages
// on a fault stay warnings.
func TestRaftLoggerLevels(t *testing.T) {
	for _, c := range []struct {
		name   string
		single bool
		msg    string
		args   []interface{}
		level  string
	}{
		{"first election", false, msgSingleElection, []interface{}{"last-leader-addr", raft.ServerAddress(""), "last-leader-id", raft.ServerID("")}, "INFO"},
		{"leader lost", false, msgSingleElection, []interface{}{"last-leader-addr", raft.ServerAddress("10.0.0.1:7000"), "last-leader-id", raft.ServerID("n1")}, "WARN"},
		{"single node", true, msgSingleElection, []interface{}{"last-leader-addr", raft.ServerAddress("x"), "last-leader-id", raft.ServerID("n1")}, "INFO"},
		{"single node's slow vote", true, msgElectionRestart, nil, "INFO"},
		{"cluster election lost", false, msgElectionRestart, nil, "WARN"},
		{"catching up", false, msgNoPrevious, []interface{}{"previous-index", 1, "last-index", 0, "error", raft.ErrLogNotFound}, "INFO"},
		{"log unreadable", false, msgNoPrevious, []interface{}{"previous-index", 1, "last-index", 0, "error", errors.New("input/output error")}, "WARN"},
		{"walking back", false, msgSendingOlder, []interface{}{"peer", "n2", "next", 1}, "INFO"},
		{"no peers", false, msgNoPeers, nil, "INFO"},
		{"candidate behind", false, msgVoteTermBehind, []interface{}{"candidate", "10.0.0.2:7000", "last-term", 5, "last-candidate-term", 4}, "INFO"},
		{"pre-vote candidate behind", false, msgPreVoteIndexBehind, []interface{}{"candidate", "10.0.0.2:7000", "last-index", 9, "last-candidate-index", 8}, "INFO"},
		{"vote while a leader leads", false, "rejecting vote request since we have a leader", []interface{}{"from", "10.0.0.2:7000"}, "WARN"},
		{"not a voter", false, msgNotVoter, nil, "INFO"},
		{"other", false, "failed to contact", []interface{}{"server-id", "n2"}, "WARN"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantLogged(t, raftLogger{single: c.single}, c.msg, c.level, func(l raftLogger) { l.Warn(c.msg, c.args...) })
		})
	}
}

// Raft's errors about requests this node's own stop cut short are logged
// at debug level; a peer's failure stays an error.
func TestRaftLoggerStopErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		msg   string
		err   error
		level string
	}{
		{"vote asked as the plane closes", "failed to make requestVote RPC", &net.OpError{Op: "dial", Net: "tcp", Err: context.Canceled}, "DEBUG"},
		{"entries under way as the plane closes", "failed to appendEntries to", fmt.Errorf("read: %w", net.ErrClosed), "DEBUG"},
		{"peer refused", "failed to make requestVote RPC", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, "ERROR"},
		{"peer timed out", "failed to appendEntries to", context.DeadlineExceeded, "ERROR"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantLogged(t, raftLogger{}, c.msg, c.level, func(l raftLogger) { l.Error(c.msg, "peer", "n2", "error", c.err) })
		})
	}
}

// Once the node is stopping, its peers' refusals and the elections they
// bring are part of the stop; Raft's errors about its own log are not.
func TestRaftLoggerWhileStopping(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	for _, c := range []struct {
		name     string
		stopping bool
		warn     bool
		msg      string
		args     []interface{}
		level    string
	}{
		{"peer refused", true, false, "failed to appendEntries to", []interface{}{"peer", "n2", "error", refused}, "DEBUG"},
		{"vote refused", true, false, "failed to make requestVote RPC", []interface{}{"target", "n2", "error", refused}, "DEBUG"},
		{"peer refused, running", false, false, "failed to appendEntries to", []interface{}{"peer", "n2", "error", refused}, "ERROR"},
		{"own log", true, false, "failed to append to logs", []interface{}{"error", errors.New("input/output error")}, "ERROR"},
		{"leader gone", true, true, msgSingleElection, []interface{}{"last-leader-id", raft.ServerID("n1")}, "INFO"},
		{"quorum gone", true, true, "failed to contact quorum of nodes, stepping down", nil, "INFO"},
		{"quorum gone, running", false, true, "failed to contact quorum of nodes, stepping down", nil, "WARN"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stopping atomic.Bool
			stopping.Store(c.stopping)
			log := raftLogger.Error
			if c.warn {
				log = raftLogger.Warn
			}
			wantLogged(t, raftLogger{stopping: &stopping}, c.msg, c.level, func(l raftLogger) { log(l, c.msg, c.args...) })
		})
	}
}
