package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"

	"github.com/goblindb/goblin/internal/durable"
)

// The manifest records the base index of the log's last segment, so that
// Open notices a missing tail segment: without it, a deleted last segment
// would look like a log that simply ends earlier. It is rewritten (a new
// file renamed over the old, then the directory synced) only when the last
// segment changes: a segment is created, or a suffix deletion removes the
// last ones. A new segment is recorded after its file is durable and
// before anything is appended to it; a removal is recorded before the
// files go. So after a crash the recorded segment exists, and segments
// after it (a creation or removal that did not finish) hold nothing
// acknowledged, or entries raft asked to delete.
//
//	manifest: "GOBLWALM" | last segment base u64 (0: no segment) | CRC-32C of the 16 bytes before u32
const (
	manifestName  = "manifest"
	manifestMagic = "GOBLWALM"
	manifestLen   = 20
)

// readManifest returns the last segment base the manifest records, and
// false if there is no manifest.
func readManifest(dir string) (uint64, bool, error) {
	if st, err := os.Lstat(filepath.Join(dir, manifestName)); err == nil && !st.Mode().IsRegular() && !st.IsDir() {
		// Reading a named pipe would wait forever.
		return 0, false, fmt.Errorf("wal: %s is not a regular file (%s)", filepath.Join(dir, manifestName), st.Mode().Type())
	}
	b, err := os.ReadFile(filepath.Join(dir, manifestName))
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	if len(b) != manifestLen || string(b[:8]) != manifestMagic ||
		crc32.Checksum(b[:16], castagnoli) != binary.LittleEndian.Uint32(b[16:]) {
		return 0, false, corruptf("%s is damaged (remove it to accept the segments present as the whole log)", filepath.Join(dir, manifestName))
	}
	return binary.LittleEndian.Uint64(b[8:]), true, nil
}

// writeManifest durably records last as the last segment's base. renamed
// tells, on error, whether the new manifest may have replaced the old.
func (l *Log) writeManifest(last uint64) (renamed bool, err error) {
	if last == l.manifest && l.manifestOK {
		return false, nil
	}
	if err := l.inject(OpManifest); err != nil {
		return false, fmt.Errorf("wal: writing the manifest: %w", err)
	}
	b := make([]byte, 0, manifestLen)
	b = append(b, manifestMagic...)
	b = binary.LittleEndian.AppendUint64(b, last)
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	tmp := filepath.Join(l.dir, manifestName+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err == nil {
		_, err = f.Write(b)
		if err == nil {
			err = datasync(f)
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(l.dir, manifestName))
		renamed = err == nil
	}
	if err == nil {
		err = durable.SyncDir(l.dir)
	}
	if err != nil {
		os.Remove(tmp)
		if renamed {
			l.manifest, l.manifestOK = last, false
		}
		return renamed, fmt.Errorf("wal: writing the manifest: %w", err)
	}
	l.manifest, l.manifestOK = last, true
	return false, nil
}
