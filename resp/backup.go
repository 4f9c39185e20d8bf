package resp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/goblindb/goblin/backup"
	"github.com/goblindb/goblin/command"
	"github.com/goblindb/goblin/node"
)

// BackupBackend is what GOBLIN DIGEST, BACKUP and RESTORE need beyond
// Backend (*node.Node has it); a backend without it answers them with an
// error.
type BackupBackend interface {
	// Digest returns the index of the state and its digest, after a read
	// barrier (local: READONLY's).
	Digest(ctx context.Context, local bool) (uint64, backup.Sum, error)
	// Backup writes a backup to a file it returns open, at its start, and
	// already unlinked.
	Backup(ctx context.Context, local bool) (*os.File, *backup.Meta, error)
	// Restore replaces the cluster's state with the backup r.
	Restore(ctx context.Context, r io.Reader, force bool) (*backup.Meta, error)
}

var errNoBackup = command.Errorf("ERR this node does not support backups")

func (c *client) backupBackend() BackupBackend {
	bb, _ := c.s.backend.(BackupBackend)
	return bb
}

// goblinDigest answers [index, digest]: the state's index on this node
// and its digest there. It is a read: linearizable, or local after
// READONLY.
func goblinDigest(c *client) {
	bb := c.backupBackend()
	if bb == nil {
		c.replyError(errNoBackup)
		return
	}
	index, sum, err := bb.Digest(context.Background(), c.readonly)
	if err != nil {
		c.replyError(translate(err))
		return
	}
	c.reply(func(w *command.Writer) {
		w.Array(2)
		w.Int(int64(index))
		w.BulkString(sum.String())
	})
}

// goblinBackup answers the backup as one bulk string. The node writes it
// to a file first; the replies before it are sent, then the file is
// copied to the connection as it is read, so the reply is never held in
// memory whole.
func goblinBackup(c *client) {
	bb := c.backupBackend()
	if bb == nil {
		c.replyError(errNoBackup)
		return
	}
	f, m, err := bb.Backup(context.Background(), c.readonly)
	if err != nil {
		c.replyError(translate(err))
		return
	}
	defer f.Close()
	if c.nc == nil { // not served on a socket (tests): build it whole
		b, err := io.ReadAll(f)
		if err != nil {
			c.replyError(err)
			return
		}
		c.reply(func(w *command.Writer) { w.Bulk(b) })
		return
	}
	if err := c.flushOut(); err != nil {
		return
	}
	hdr := "$" + strconv.FormatInt(m.Size, 10) + "\r\n"
	if _, err := io.WriteString(c.nc, hdr); err != nil {
		c.kill()
		return
	}
	if n, err := io.Copy(c.nc, f); err != nil || n != m.Size {
		// The reply cannot be finished: the connection must not go on
		// with a bulk string cut short.
		c.kill()
		return
	}
	if _, err := io.WriteString(c.nc, "\r\n"); err != nil {
		c.kill()
	}
}

// goblinRestore replaces the cluster's state with the backup in args[0]
// (FORCE in args[1] lets it replace keys).
func goblinRestore(c *client, args [][]byte) {
	bb := c.backupBackend()
	if bb == nil {
		c.replyError(errNoBackup)
		return
	}
	force := false
	if len(args) == 2 {
		if !strings.EqualFold(string(args[1]), "force") {
			c.replyError(command.Errorf("ERR syntax error"))
			return
		}
		force = true
	}
	if _, err := bb.Restore(context.Background(), bytes.NewReader(args[0]), force); err != nil {
		c.replyError(restoreError(err))
		return
	}
	c.reply(func(w *command.Writer) { w.OK() })
}

// restoreError words a restore's refusal.
func restoreError(err error) error {
	switch {
	case errors.Is(err, node.ErrNotEmpty):
		return command.Errorf("ERR restore refused: %s; GOBLIN RESTORE <backup> FORCE replaces the cluster's data", err)
	case errors.Is(err, node.ErrRestoring):
		return command.Errorf("ERR a restore is already running")
	case errors.Is(err, backup.ErrNotBackup), errors.Is(err, backup.ErrVersion), errors.Is(err, backup.ErrCorrupt):
		return command.Errorf("ERR invalid backup: %s", err)
	}
	return translate(err)
}
