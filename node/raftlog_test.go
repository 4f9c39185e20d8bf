package node

import (
	"errors"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/internal/testutil"
)

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
		{"catching up", false, msgNoPrevious, []interface{}{"previous-index", 1, "last-index", 0, "error", raft.ErrLogNotFound}, "INFO"},
		{"log unreadable", false, msgNoPrevious, []interface{}{"previous-index", 1, "last-index", 0, "error", errors.New("input/output error")}, "WARN"},
		{"walking back", false, msgSendingOlder, []interface{}{"peer", "n2", "next", 1}, "INFO"},
		{"no peers", false, msgNoPeers, nil, "INFO"},
		{"not a voter", false, msgNotVoter, nil, "INFO"},
		{"other", false, "failed to contact", []interface{}{"server-id", "n2"}, "WARN"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out testutil.SyncBuffer
			l := raftLogger{Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Info, Output: &out}), single: c.single}
			l.Warn(c.msg, c.args...)
			if !strings.Contains(out.String(), "["+c.level+"]") || !strings.Contains(out.String(), c.msg) {
				t.Fatalf("want %s, logged %q", c.level, out.String())
			}
		})
	}
}
