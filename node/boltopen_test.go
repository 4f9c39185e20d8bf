package node

import (
	"os"
	"path/filepath"
	"testing"
)

// Damage in a bolt file (the stable store; the log with --log-store bolt)
// stops the node with an error that names the file, not with a Go panic
// or a memory fault; a single node whose stable store was damaged and
// then removed starts again with its data.
func TestDamagedBoltFilesRefused(t *testing.T) {
	damage := map[string]func(p string) error{
		"truncated": func(p string) error { return os.Truncate(p, 10000) },
		"page 3 flipped": func(p string) error {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for i := 3 * 4096; i < 3*4096+64 && i < len(b); i++ {
				b[i] ^= 0xff
			}
			return os.WriteFile(p, b, 0o644)
		},
	}
	for name, f := range damage {
		t.Run("stable/"+name, func(t *testing.T) {
			dir := t.TempDir()
			n := startFaulty(t, dir, LogStoreWAL, FsyncAlways, nil)
			writeMembers(t, n, 0, 50)
			n.Close()
			p := filepath.Join(dir, "raft-stable.db")
			if err := f(p); err != nil {
				t.Fatal(err)
			}
			wantStartError(t, dir, "raft-stable.db", "move the data directory aside")
			os.Remove(p)
			n = startFaulty(t, dir, LogStoreAuto, FsyncAlways, nil)
			checkMembers(t, n, 50)
		})
		t.Run("log/"+name, func(t *testing.T) {
			dir := t.TempDir()
			n := startFaulty(t, dir, LogStoreBolt, FsyncAlways, nil)
			writeMembers(t, n, 0, 50)
			n.Close()
			if err := f(filepath.Join(dir, boltLogFile)); err != nil {
				t.Fatal(err)
			}
			wantStartError(t, dir, boltLogFile, "is damaged")
		})
	}
}
