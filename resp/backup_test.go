package resp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/goblindb/goblin/backup"
	"github.com/goblindb/goblin/node"
	"github.com/goblindb/goblin/raftfsm"
)

// backupFake adds GOBLIN DIGEST, BACKUP and RESTORE to the fake backend:
// its state is the applier's keyspace at the fake's index.
type backupFake struct {
	*fakeBackend
	restored  [][]byte
	forced    []bool
	restoreTo error
}

func (b *backupFake) state() *raftfsm.State {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.a.KS.RLock()
	defer b.a.KS.RUnlock()
	return &raftfsm.State{KS: b.a.KS.Clone(), Index: b.index}
}

func (b *backupFake) Digest(ctx context.Context, local bool) (uint64, backup.Sum, error) {
	if err := b.ReadBarrier(ctx, local); err != nil {
		return 0, backup.Sum{}, err
	}
	st := b.state()
	sum, _ := backup.Digest(st)
	return st.Index, sum, nil
}

func (b *backupFake) Backup(ctx context.Context, local bool) (*os.File, *backup.Meta, error) {
	if err := b.ReadBarrier(ctx, local); err != nil {
		return nil, nil, err
	}
	f, err := os.CreateTemp("", "resp-backup-*")
	if err != nil {
		return nil, nil, err
	}
	os.Remove(f.Name())
	m, err := backup.Write(f, b.state(), backup.Meta{Node: "fake"})
	if err != nil {
		return nil, nil, err
	}
	f.Seek(0, 0)
	return f, m, nil
}

func (b *backupFake) Restore(ctx context.Context, r io.Reader, force bool) (*backup.Meta, error) {
	if _, _, err := backup.Read(r); err != nil {
		return nil, err
	}
	if b.restoreTo != nil {
		return nil, b.restoreTo
	}
	b.forced = append(b.forced, force)
	return &backup.Meta{}, nil
}

func startBackupServer(t *testing.T) (*Server, *backupFake) {
	t.Helper()
	fb := &backupFake{fakeBackend: newFakeBackend()}
	s := NewServer(Config{Addr: "127.0.0.1:0"}, fb)
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	s.Serve()
	t.Cleanup(func() { s.Close() })
	return s, fb
}

// readBulk reads a bulk string reply's payload.
func readBulk(t *testing.T, c *conn) []byte {
	t.Helper()
	line, err := c.rd.ReadString('\n')
	if err != nil || line[0] != '$' {
		t.Fatalf("want a bulk string, got %q %v", line, err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
	b := make([]byte, n+2)
	if _, err := io.ReadFull(c.rd, b); err != nil || string(b[n:]) != "\r\n" {
		t.Fatalf("bulk of %d: %v", n, err)
	}
	return b[:n]
}

func TestGoblinDigestBackupRestore(t *testing.T) {
	s, fb := startBackupServer(t)
	c := dial(t, s)
	c.do("ZADD", "k", "1", "a", "2", "b")
	c.do("ZCREATE", "p", "int32:float32", "1", "7")

	st := fb.state()
	want, _ := backup.Digest(st)
	if got := c.do("GOBLIN", "DIGEST"); got != fmt.Sprintf("*2\r\n:%d\r\n$64\r\n%s\r\n", st.Index, want) {
		t.Fatalf("GOBLIN DIGEST: %q", got)
	}

	// Pipelined around other commands, the backup comes back in order,
	// whole, and reads back with the state's digest.
	c.send(append(append(encode("PING"), encode("GOBLIN", "backup")...), encode("PING")...))
	if got := c.read(); got != "+PONG\r\n" {
		t.Fatalf("before: %q", got)
	}
	file := readBulk(t, c)
	if got := c.read(); got != "+PONG\r\n" {
		t.Fatalf("after: %q", got)
	}
	m, _, err := backup.Read(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	if m.Digest != want || m.Index != st.Index || m.Counts.Keys != 2 {
		t.Fatalf("backup meta %+v", m)
	}

	if got := c.do("GOBLIN", "RESTORE", string(file)); got != "+OK\r\n" {
		t.Fatalf("RESTORE: %q", got)
	}
	if got := c.do("GOBLIN", "RESTORE", string(file), "force"); got != "+OK\r\n" {
		t.Fatalf("RESTORE FORCE: %q", got)
	}
	if fmt.Sprint(fb.forced) != "[false true]" {
		t.Fatalf("forced %v", fb.forced)
	}
	if got := c.do("GOBLIN", "RESTORE", string(file), "now"); got != "-ERR syntax error\r\n" {
		t.Fatalf("RESTORE with a bad option: %q", got)
	}
	if got := c.do("GOBLIN", "RESTORE", string(file[:len(file)-3])); !strings.HasPrefix(got, "-ERR invalid backup: corrupt backup file") {
		t.Fatalf("RESTORE of a cut file: %q", got)
	}
	if got := c.do("GOBLIN", "RESTORE", "hello"); got != "-ERR invalid backup: not a goblin backup file\r\n" {
		t.Fatalf("RESTORE of garbage: %q", got)
	}
	fb.restoreTo = fmt.Errorf("%w: 3 keys", node.ErrNotEmpty)
	if got := c.do("GOBLIN", "RESTORE", string(file)); got != "-ERR restore refused: the cluster holds data: 3 keys; GOBLIN RESTORE <backup> FORCE replaces the cluster's data\r\n" {
		t.Fatalf("RESTORE into data: %q", got)
	}
	if got := c.do("GOBLIN", "RESTORE"); !strings.HasPrefix(got, "-ERR unknown subcommand or wrong number of arguments") {
		t.Fatalf("RESTORE without a backup: %q", got)
	}

	// A read barrier's failure is the read's error.
	fb.mu.Lock()
	fb.err = node.ErrNoLeader
	fb.mu.Unlock()
	if got := c.do("GOBLIN", "DIGEST"); !strings.HasPrefix(got, "-CLUSTERDOWN") {
		t.Fatalf("DIGEST without a leader: %q", got)
	}
	if got := c.do("GOBLIN", "BACKUP"); !strings.HasPrefix(got, "-CLUSTERDOWN") {
		t.Fatalf("BACKUP without a leader: %q", got)
	}
}

// The subcommands are @admin and @dangerous: a user without them is
// refused, and COMMAND INFO lists them.
func TestGoblinBackupPermissions(t *testing.T) {
	s, _ := startBackupServer(t)
	c := dial(t, s)
	if got := c.do("ACL", "SETUSER", "app", "on", ">pw", "~*", "+@all", "-@dangerous"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	u := dial(t, s)
	u.do("AUTH", "app", "pw")
	for _, sub := range []string{"digest", "backup", "restore"} {
		argv := []string{"GOBLIN", sub}
		if sub == "restore" {
			argv = append(argv, "x")
		}
		if got := u.do(argv...); !strings.HasPrefix(got, "-NOPERM") || !strings.Contains(got, "goblin|"+sub) {
			t.Errorf("%s: %q", sub, got)
		}
	}
	info := c.do("COMMAND", "INFO", "goblin")
	for _, sub := range []string{"goblin|backup", "goblin|digest", "goblin|restore"} {
		if !strings.Contains(info, sub) {
			t.Errorf("COMMAND INFO goblin lacks %s", sub)
		}
	}
}

// Without backup support the subcommands say so.
func TestGoblinBackupUnsupported(t *testing.T) {
	s, _ := startServer(t, Config{})
	c := dial(t, s)
	if got := c.do("GOBLIN", "DIGEST"); got != "-ERR this node does not support backups\r\n" {
		t.Fatalf("%q", got)
	}
}
