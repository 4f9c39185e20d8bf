package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/goblindb/goblin/keyspace"
)

// goblind import --from: keys are enumerated with SCAN, each batch's
// sorted sets read with DUMP, PTTL and ZCARD and stored with RESTORE ...
// REPLACE, or in chunks when they are big.

// redisSource parses --from.
func redisSource(from string) (addr, user, pass string, db int, tlsConfig *tls.Config, err error) {
	u, err := url.Parse(from)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
		return "", "", "", 0, nil, fmt.Errorf("--from %q: want redis://[user:pass@]host:port[/db]", from)
	}
	addr = u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "6379")
	}
	if u.User != nil {
		user = u.User.Username()
		pass, _ = u.User.Password()
		if _, ok := u.User.Password(); !ok {
			user, pass = "", user // redis://secret@host: a password alone
		}
	}
	if p := strings.Trim(u.Path, "/"); p != "" {
		if db, err = strconv.Atoi(p); err != nil || db < 0 {
			return "", "", "", 0, nil, fmt.Errorf("--from %q: database %q", from, p)
		}
	}
	if u.Scheme == "rediss" {
		tlsConfig = &tls.Config{ServerName: u.Hostname(), MinVersion: tls.VersionTLS12}
	}
	return addr, user, pass, db, tlsConfig, nil
}

// fromRedis imports the sorted sets of a live Redis server, SCAN batch by
// SCAN batch.
func (im *importer) fromRedis(ctx context.Context) error {
	addr, user, pass, db, tlsConfig, err := redisSource(im.o.from)
	if err != nil {
		return err
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	src, err := dialRESP(dctx, addr, tlsConfig, user, pass)
	cancel()
	if err != nil {
		return fmt.Errorf("redis %s: %w", addr, err)
	}
	defer src.Close()
	if db != 0 {
		if _, err := src.do("SELECT", strconv.Itoa(db)); err != nil {
			return fmt.Errorf("redis: SELECT %d: %w", db, err)
		}
	}
	if im.o.db >= 0 {
		db = im.o.db
	}
	if db >= keyspace.NumDBs {
		return fmt.Errorf("database %d: goblind has %d", db, keyspace.NumDBs)
	}
	if err := im.selectDB(db); err != nil {
		return err
	}
	total := int64(-1)
	if r, err := src.do("DBSIZE"); err == nil {
		total = r.Num
	}
	cursor := im.o.cursor
	var scanned int64
	for {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted: resume with --cursor %s", cursor)
		}
		r, err := src.do("SCAN", cursor, "COUNT", strconv.Itoa(im.o.scanCount))
		if err != nil {
			return fmt.Errorf("redis: SCAN %s: %w", cursor, err)
		}
		if len(r.Array) != 2 {
			return fmt.Errorf("redis: SCAN: unexpected reply")
		}
		next := string(r.Array[0].Str)
		if err := im.copyBatch(src, r.Array[1].Array); err != nil {
			return fmt.Errorf("%w (resume with --cursor %s)", err, cursor)
		}
		scanned += int64(len(r.Array[1].Array))
		cursor = next
		im.progress(func() string {
			return fmt.Sprintf("%d/%d keys scanned, %d sets imported, cursor %s", scanned, total, im.keys, cursor)
		})
		if cursor == "0" {
			im.otherDBs = otherDatabases(src, db)
			return nil
		}
	}
}

// otherDatabases lists the source's databases but db that hold keys
// (INFO keyspace; nil if it cannot be read): one import copies one
// database, and the report names the others.
func otherDatabases(src *respClient, db int) []int {
	r, err := src.do("INFO", "keyspace")
	if err != nil {
		return nil
	}
	var out []int
	for _, line := range strings.Split(string(r.Str), "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		n, err := strconv.Atoi(strings.TrimPrefix(name, "db"))
		if !ok || !strings.HasPrefix(name, "db") || err != nil || n == db || !strings.HasPrefix(rest, "keys=") || strings.HasPrefix(rest, "keys=0,") {
			continue
		}
		out = append(out, n)
	}
	sort.Ints(out)
	return out
}

// copyBatch stores one SCAN batch's sorted sets: their TYPE, then DUMP,
// PTTL and ZCARD, pipelined; then RESTOREs (or chunks) to the node.
func (im *importer) copyBatch(src *respClient, keys []reply) error {
	for _, k := range keys {
		src.send([]byte("TYPE"), k.Str)
	}
	if err := src.flush(); err != nil {
		return err
	}
	var zkeys [][]byte
	for _, k := range keys {
		t, err := src.read()
		if err != nil {
			return fmt.Errorf("redis: %w", err)
		}
		switch kind := string(t.Str); {
		case t.Kind == '-':
			return fmt.Errorf("redis: TYPE: %s", t.Str)
		case kind == "zset":
			zkeys = append(zkeys, k.Str)
		case kind != "none":
			im.skipped[kind]++
		}
	}
	for _, k := range zkeys {
		src.send([]byte("DUMP"), k)
		src.send([]byte("PTTL"), k)
		src.send([]byte("ZCARD"), k)
	}
	if err := src.flush(); err != nil {
		return err
	}
	type got struct {
		dump        reply
		pttl, zcard int64
		key         []byte
		dumpFailed  bool
	}
	res := make([]got, len(zkeys))
	for i, k := range zkeys {
		res[i].key = k
		for j := range 3 {
			r, err := src.read()
			if err != nil {
				return fmt.Errorf("redis: %w", err)
			}
			if r.Kind == '-' {
				return fmt.Errorf("redis: %s", r.Str)
			}
			switch j {
			case 0:
				res[i].dump = r
			case 1:
				res[i].pttl = r.Num
			default:
				res[i].zcard = r.Num
			}
		}
	}
	for _, g := range res {
		if g.dump.Null || g.pttl == -2 || g.zcard == 0 {
			continue // gone since SCAN saw it
		}
		ttl := g.pttl
		if ttl < 0 {
			ttl = 0
		}
		job := &keyJob{name: string(g.key), members: g.zcard}
		if g.zcard <= int64(im.o.big) && len(g.dump.Str) <= importMaxBytes {
			if err := im.restore(job, ttl, false, g.dump.Str); err != nil {
				return err
			}
			continue
		}
		if err := im.copyChunked(src, job, ttl); err != nil {
			return err
		}
	}
	return im.drain()
}

// copyChunked copies a big set with ZRANGE ... WITHSCORES by rank, --chunk
// members at a time (a set changing meanwhile may be copied partly old,
// partly new, as any copy of a live server).
func (im *importer) copyChunked(src *respClient, job *keyJob, ttl int64) error {
	if err := im.queue(job, false, []byte("DEL"), []byte(job.name)); err != nil {
		return err
	}
	job.members = 0
	var scores, members [][]byte
	for start := 0; ; start += im.o.chunk {
		r, err := src.do("ZRANGE", job.name, strconv.Itoa(start), strconv.Itoa(start+im.o.chunk-1), "WITHSCORES")
		if err != nil {
			return fmt.Errorf("redis: ZRANGE: %w", err)
		}
		if len(r.Array) == 0 {
			break
		}
		scores, members = scores[:0], members[:0]
		for i := 0; i+1 < len(r.Array); i += 2 {
			members = append(members, r.Array[i].Str)
			scores = append(scores, r.Array[i+1].Str)
		}
		job.members += int64(len(members))
		if err := im.zadd(job, scores, members); err != nil {
			return err
		}
		if len(r.Array)/2 < im.o.chunk {
			break
		}
	}
	if ttl > 0 {
		return im.queue(job, true, []byte("PEXPIRE"), []byte(job.name), []byte(strconv.FormatInt(ttl, 10)))
	}
	return im.queue(job, true, []byte("EXISTS"), []byte(job.name))
}
