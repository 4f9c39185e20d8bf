package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/goblindb/goblin/keyspace"
	"github.com/goblindb/goblin/rdb"
)

// goblind import --rdb: the file is read key by key (package rdb); each
// sorted set is stored with RESTORE ... REPLACE ABSTTL of a payload built
// from its members, or in chunks when it is big.

// fromRDB imports the sorted sets of an RDB file.
func (im *importer) fromRDB(ctx context.Context) error {
	f, err := os.Open(im.o.rdbFile)
	if err != nil {
		return err
	}
	defer f.Close()
	var size int64
	if st, err := f.Stat(); err == nil {
		size = st.Size()
	}
	rd, err := rdb.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s: %w", im.o.rdbFile, err)
	}
	var set rdb.Members
	var scores [][]byte
	for {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted at byte %d of %s", rd.Offset(), im.o.rdbFile)
		}
		e, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", im.o.rdbFile, err)
		}
		im.progress(func() string {
			return fmt.Sprintf("%s of %s read, %d sets imported", bytesText(rd.Offset()), bytesText(size), im.keys)
		})
		if !e.Type.IsZSet() {
			im.skipped[e.Type.Kind()]++
			continue
		}
		db := e.DB
		if im.o.db >= 0 {
			db = im.o.db
		}
		if db >= keyspace.NumDBs {
			im.skipped[fmt.Sprintf("zset in db %d", e.DB)]++
			continue
		}
		if e.ExpireAt != 0 && e.ExpireAt <= time.Now().UnixMilli() {
			im.expired++
			continue
		}
		if err := im.selectDB(db); err != nil {
			return err
		}
		job := &keyJob{name: string(e.Key)}
		expireAt := e.ExpireAt
		set.Member, set.Score = set.Member[:0], set.Score[:0]
		chunked, size := false, 0
		// flush sends the members gathered so far as a ZADD.
		flush := func() error {
			scores = scores[:0]
			for _, s := range set.Score {
				scores = append(scores, rdb.FormatScore(nil, s))
			}
			err := im.zadd(job, scores, set.Member)
			set.Member, set.Score = set.Member[:0], set.Score[:0]
			return err
		}
		_, err = rd.ZSet(func(m []byte, s float64) error {
			set.Member = append(set.Member, append([]byte(nil), m...))
			set.Score = append(set.Score, s)
			job.members++
			size += len(m) + 24 // the member and its score as text, at most
			if !chunked && (len(set.Member) > im.o.big || size > importMaxBytes) {
				chunked = true
				if err := im.queue(job, false, []byte("DEL"), []byte(job.name)); err != nil {
					return err
				}
			}
			if chunked && (len(set.Member) >= im.o.chunk || size > importMaxBytes) {
				size = 0
				return flush()
			}
			return nil
		})
		if errors.Is(err, rdb.ErrEmpty) {
			im.skipped["empty zset"]++
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: key %q: %w", im.o.rdbFile, e.Key, err)
		}
		if !chunked {
			if err := im.restore(job, expireAt, true, rdb.AppendPayload(nil, &set, nil)); err != nil {
				return err
			}
			continue
		}
		if len(set.Member) > 0 {
			if err := flush(); err != nil {
				return err
			}
		}
		if expireAt != 0 {
			err = im.queue(job, true, []byte("PEXPIREAT"), []byte(job.name), []byte(strconv.FormatInt(expireAt, 10)))
		} else {
			err = im.queue(job, true, []byte("EXISTS"), []byte(job.name))
		}
		if err != nil {
			return err
		}
	}
	return im.drain()
}
