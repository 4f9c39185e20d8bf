package wal

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// recover rebuilds the index from the segment files, checking every
// batch, cutting a torn final write, and checking the manifest's last
// segment is there.
func (l *Log) recover() error {
	ents, err := os.ReadDir(l.dir)
	if err != nil {
		return err
	}
	var bases []uint64
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".seg")
		if !ok || e.IsDir() {
			continue
		}
		if !e.Type().IsRegular() {
			// Reading a named pipe would wait forever.
			return fmt.Errorf("wal: %s is not a regular file (%s)", filepath.Join(l.dir, e.Name()), e.Type())
		}
		b, err := strconv.ParseUint(name, 10, 64)
		if err != nil {
			return fmt.Errorf("wal: unexpected file %s in %s", e.Name(), l.dir)
		}
		bases = append(bases, b)
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	recorded, hasManifest, err := readManifest(l.dir)
	if err != nil {
		return err
	}
	if hasManifest && recorded != 0 {
		i := sort.Search(len(bases), func(i int) bool { return bases[i] >= recorded })
		if i == len(bases) || bases[i] != recorded {
			return corruptf("segment %s is missing: the manifest records it as the log's last segment, so entries from index %d on are lost",
				filepath.Join(l.dir, segmentName(recorded)), recorded)
		}
	}
	l.blank = !hasManifest && len(bases) == 0
	if !hasManifest && len(bases) > 0 {
		l.logf("wal: %s has no manifest (a log written by an earlier version): recording its last segment", l.dir)
	}
	for i, base := range bases {
		last := i == len(bases)-1
		path := filepath.Join(l.dir, segmentName(base))
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		v, ok := parseSegmentHeader(b, base)
		if !ok {
			// A crash while the segment was being created leaves at most
			// a partial header: nothing is appended before the header is
			// durable and the manifest records the segment.
			if !last || len(b) > segHeaderLenV2 || (hasManifest && base <= recorded) {
				return corruptf("segment %s: bad header", path)
			}
			l.logf("wal: removing %s: incomplete segment header", path)
			if err := os.Remove(path); err != nil {
				return err
			}
			continue
		}
		if versionDamaged(b, base, v) {
			return corruptf("segment %s: the header says version %d, but the segment is laid out as the other version: its version byte is damaged", path, v)
		}
		r, err := scanSegment(b, base, v, last)
		if err != nil {
			return fmt.Errorf("%w (%s)", err, path)
		}
		if r.markBad {
			l.logf("wal: %s: the sync mark is damaged; relying on the batch headers", path)
		}
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		var alloc int64
		if r.zeros {
			alloc = int64(len(b))
		} else if r.end < len(b) {
			l.logf("wal: %s: cutting a torn final write (%d bytes at offset %d, after index %d; the segment was synced up to offset %d)",
				path, len(b)-r.end, r.end, base+uint64(len(r.offs))-1, r.synced)
			if err := f.Truncate(int64(r.end)); err == nil {
				err = datasync(f)
			}
			if err != nil {
				f.Close()
				return err
			}
		}
		mark := r.synced
		if r.markBad {
			mark = 0
		}
		s := &segment{base: base, first: base, ver: v, path: path, f: f, offs: r.offs, size: int64(r.end), alloc: alloc, synced: r.synced, mark: mark}
		if n := len(l.segs); n > 0 {
			prev := l.segs[n-1]
			if len(prev.offs) == 0 || prev.lastIndex()+1 != base {
				f.Close()
				return corruptf("segment %s does not follow %s", path, prev.path)
			}
		}
		l.segs = append(l.segs, s)
	}
	if len(l.segs) > 0 && len(l.segs[0].offs) > 0 {
		l.first = l.segs[0].base
		last := l.segs[len(l.segs)-1]
		if len(last.offs) > 0 {
			l.last = last.lastIndex()
		} else {
			l.last = last.base - 1
		}
	}
	var lastBase uint64
	if n := len(l.segs); n > 0 {
		lastBase = l.segs[n-1].base
	}
	l.manifest, l.manifestOK = recorded, hasManifest
	if _, err := l.writeManifest(lastBase); err != nil {
		return err
	}
	return nil
}
