package resp

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goblindb/goblin/node"
)

// A write refused because the Raft log cannot be written gets Redis's
// MISCONF wording (as for a failing AOF), with the C library's text for
// the cause: from this node, and from a leader across the forwarding
// wire.
func TestLogWriteErrorIsMisconf(t *testing.T) {
	s, fb := startServer(t, Config{})
	c := dial(t, s)
	local := &node.LogWriteError{Err: errors.Join(errors.New("wal: append"), syscall.ENOSPC)}
	line, _ := node.WireError(local)
	forwarded := node.FromWire(line)
	if !errors.Is(forwarded, node.ErrLogWrite) {
		t.Fatalf("the forwarding wire turns the log error into %v", forwarded)
	}
	for _, err := range []error{local, forwarded, &node.LogWriteError{Err: syscall.EIO}} {
		fb.mu.Lock()
		fb.err = err
		fb.mu.Unlock()
		want := "-MISCONF Errors writing to the Raft log: No space left on device\r\n"
		if errors.Is(err, syscall.EIO) {
			want = "-MISCONF Errors writing to the Raft log: Input/output error\r\n"
		}
		if got := c.do("ZADD", "k", "1", "a"); got != want {
			t.Fatalf("ZADD = %q, want %q", got, want)
		}
	}
}

// statusBackend is a fake backend with a given status.
type statusBackend struct {
	*fakeBackend
	st node.Status
}

func (b *statusBackend) Status() node.Status { return b.st }

// INFO persistence shows a failing log and failing snapshots in Redis's
// fields (aof_last_write_status, rdb_last_bgsave_status) and Goblin's.
func TestInfoPersistenceFaults(t *testing.T) {
	since := time.Unix(1_700_000_000, 0)
	for _, tc := range []struct {
		st   node.Status
		want []string
	}{
		{node.Status{Fsync: "always"}, []string{
			"aof_last_write_status:ok", "rdb_last_bgsave_status:ok", "goblin_log_write_error:\r\n", "goblin_snapshot_error:\r\n",
			"rdb_last_save_time:0",
		}},
		{node.Status{Fsync: "always",
			LogWriteErr: &node.LogWriteError{Err: syscall.ENOSPC}, LogWriteErrSince: since,
			SnapshotErr: errors.New("write state.bin:\nno space left on device"), SnapshotErrSince: since, LastSnapshot: since,
		}, []string{
			"aof_last_write_status:err", "rdb_last_bgsave_status:err",
			"goblin_log_write_error:error writing to the Raft log: no space left on device\r\n",
			"goblin_log_write_error_since:1700000000", "goblin_snapshot_error:write state.bin: no space left on device\r\n",
			"goblin_snapshot_error_since:1700000000", "rdb_last_save_time:1700000000",
		}},
	} {
		b := &statusBackend{fakeBackend: newFakeBackend(), st: tc.st}
		s := NewServer(Config{Addr: "127.0.0.1:0"}, b)
		if err := s.Listen(); err != nil {
			t.Fatal(err)
		}
		s.Serve()
		c := dial(t, s)
		info := c.do("INFO", "persistence")
		for _, w := range tc.want {
			if !strings.Contains(info, "\r\n"+w) {
				t.Errorf("INFO persistence lacks %q:\n%s", w, info)
			}
		}
		s.Close()
	}
}
