package node

import (
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"

	"github.com/goblindb/goblin/internal/durable"
)

// A checksum of each snapshot's meta.json.
//
// raft's store checks a snapshot's state (state.bin) against a CRC its
// meta.json holds, but nothing checks meta.json itself. A flipped bit
// that leaves it valid JSON was believed: a voter turned nonvoter left a
// single node waiting for an election it could not win, answering
// CLUSTERDOWN for ever; a changed address or term misled it as quietly.
//
// So once raft has written a snapshot (its directory renamed into
// place), the store writes meta.sum beside meta.json: the CRC-32C of
// meta.json's bytes. A meta.json that does not match its meta.sum is
// treated as one raft cannot parse (snapshots_meta.go): set aside before
// raft starts when the log makes up for it, else the node refuses to
// start. A snapshot without meta.sum (written by an earlier build, or a
// crash between raft's rename and the sum) is taken as it is; writing the
// sum failing only loses the check, so it is logged and the snapshot kept.

// metaFileName is raft's metadata file in a snapshot's directory, and
// metaSumName the checksum file beside it.
const (
	metaFileName = "meta.json"
	metaSumName  = "meta.sum"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// metaSum is the content of meta.sum for a meta.json holding b.
func metaSum(b []byte) string {
	return fmt.Sprintf("crc32c %08x\n", crc32.Checksum(b, castagnoli))
}

// writeMetaSum writes the checksum of the meta.json in the snapshot
// directory dir, durably.
func writeMetaSum(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, metaFileName))
	if err != nil {
		return err
	}
	return durable.ReplaceFile(filepath.Join(dir, metaSumName), []byte(metaSum(b)), 0o644)
}

// checkMetaSum returns why b, the meta.json in the snapshot directory
// dir, does not match its meta.sum; nil when it does or there is none.
func checkMetaSum(dir string, b []byte) error {
	sum, err := os.ReadFile(filepath.Join(dir, metaSumName))
	switch {
	case os.IsNotExist(err):
		return nil
	case err != nil:
		return fmt.Errorf("its checksum (%s) cannot be read: %w", metaSumName, err)
	case string(sum) != metaSum(b):
		return fmt.Errorf("it does not match its checksum (%s): it is damaged", metaSumName)
	}
	return nil
}
