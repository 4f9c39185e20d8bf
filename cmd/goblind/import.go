package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/goblindb/goblin/keyspace"
)

// goblind import copies the sorted sets of a live Redis server (--from)
// or of an RDB file (--rdb) into a running goblind (--addr). Keys of other
// types are counted by type and skipped; the node's --packed rules choose
// the layout of every key it creates, as for any other write.
//
// A set travels as one RESTORE ... REPLACE of a DUMP payload: from Redis
// the payload Redis makes, from a file one built from the decoded members
// (rdb.AppendPayload), with the key's expiry (ABSTTL). A set of more than
// --big members, or whose payload passes importMaxBytes, travels instead
// as DEL, ZADDs of --chunk members (split further to stay under
// importMaxBytes) and PEXPIREAT, so no single command or log entry grows
// with the set.
// Commands are pipelined, a window at a time.
//
// From Redis, keys are enumerated with SCAN; after each batch is stored
// the progress line shows the next cursor, which --cursor resumes from
// (re-importing a key is harmless: REPLACE); when stderr is not a
// terminal, a progress line with the cursor is written every ten seconds.
// An interrupt stops after the batch in flight and prints the cursor to
// resume from.

type importOptions struct {
	from, rdbFile, addr, user, pass, cursor string
	db, big, chunk, scanCount, window       int
	quiet                                   bool
}

func importCmd(args []string) int {
	fs := flag.NewFlagSet("goblind import", flag.ContinueOnError)
	var o importOptions
	fs.StringVar(&o.from, "from", "", "Redis server to copy: redis://[user:pass@]host:port[/db] (rediss:// for TLS)")
	fs.StringVar(&o.rdbFile, "rdb", "", "RDB file to import (as written by Redis's SAVE or BGSAVE)")
	fs.StringVar(&o.addr, "addr", envOr("GOBLIN_ADDR", "127.0.0.1:6379"), "goblind node to import into")
	defPass, _, err := envValue("GOBLIN_REQUIREPASS", false)
	if err != nil {
		fmt.Fprintln(os.Stderr, "goblind import: GOBLIN_REQUIREPASS_FILE:", err)
		return 2
	}
	fs.StringVar(&o.user, "user", "", "ACL user to authenticate to the node as (with --requirepass)")
	fs.StringVar(&o.pass, "requirepass", defPass, "the node's password (default: GOBLIN_REQUIREPASS, or the file GOBLIN_REQUIREPASS_FILE names)")
	fs.IntVar(&o.db, "db", -1, "database to import into (default: the source's: the URL's, or each key's in the file)")
	fs.StringVar(&o.cursor, "cursor", "0", "with --from: SCAN cursor to resume from")
	fs.IntVar(&o.big, "big", 50000, "sets with more members travel in ZADD chunks instead of one RESTORE")
	fs.IntVar(&o.chunk, "chunk", 5000, "members per ZADD for sets over --big")
	fs.IntVar(&o.scanCount, "scan-count", 1000, "with --from: SCAN's COUNT")
	fs.IntVar(&o.window, "window", 64, "commands in flight to the node")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress line on stderr")
	pt := registerPingTLS(fs)
	if err := parseArgs(fs, args, os.Stdout); err != nil {
		return exitParse(err)
	}
	if (o.from == "") == (o.rdbFile == "") {
		fmt.Fprintln(os.Stderr, "goblind import: give one of --from or --rdb")
		return 2
	}
	if o.db >= keyspace.NumDBs || o.big < 1 || o.chunk < 1 || o.window < 1 || o.scanCount < 1 {
		fmt.Fprintln(os.Stderr, "goblind import: --db, --big, --chunk, --window or --scan-count out of range")
		return 2
	}
	tlsConfig, err := pt.config(fs, &o.addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "goblind import:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	dst, err := dialRESP(dctx, o.addr, tlsConfig, o.user, o.pass)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "goblind import: node:", err)
		return 1
	}
	defer dst.Close()
	im := &importer{o: o, dst: dst, curDB: -1, skipped: map[string]int64{}, start: time.Now()}
	if o.rdbFile != "" {
		err = im.fromRDB(ctx)
	} else {
		err = im.fromRedis(ctx)
	}
	im.progressDone()
	im.report(os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "goblind import:", err)
		return 1
	}
	if im.errors > 0 {
		return 1
	}
	return 0
}

// importer sends the commands that store each key and reads their
// replies, a window at a time.
type importer struct {
	o     importOptions
	dst   *respClient
	curDB int

	inFlight []expect
	keys     int64
	members  int64
	expired  int64
	errors   int64
	skipped  map[string]int64
	firstErr []string
	// otherDBs are the source server's other databases holding keys
	// (--from copies one database).
	otherDBs []int

	start    time.Time
	lastShow time.Time
	shown    bool
	tty      int // 0: not checked yet, 1: stderr is a terminal, 2: it is not
	line     func() string
}

// keyJob is one key being stored: imported when its last command's reply
// arrives and none failed.
type keyJob struct {
	name    string
	members int64
	failed  bool
}

type expect struct {
	job  *keyJob // nil for SELECT
	last bool
}

// queue sends one command for job (last: the key's final one).
func (im *importer) queue(job *keyJob, last bool, args ...[]byte) error {
	if err := im.dst.send(args...); err != nil {
		return err
	}
	im.inFlight = append(im.inFlight, expect{job, last})
	if len(im.inFlight) >= im.o.window {
		return im.drain()
	}
	return nil
}

// drain flushes the pipeline and reads every reply outstanding.
func (im *importer) drain() error {
	if len(im.inFlight) == 0 {
		return nil
	}
	if err := im.dst.flush(); err != nil {
		return fmt.Errorf("node: %w", err)
	}
	for _, e := range im.inFlight {
		r, err := im.dst.read()
		if err != nil {
			return fmt.Errorf("node: %w", err)
		}
		if e.job == nil {
			if r.Kind == '-' {
				return fmt.Errorf("node: SELECT: %s", r.Str)
			}
			continue
		}
		if r.Kind == '-' && !e.job.failed {
			e.job.failed = true
			im.errors++
			if len(im.firstErr) < 10 {
				im.firstErr = append(im.firstErr, fmt.Sprintf("%q: %s", e.job.name, r.Str))
			}
		}
		if e.last && !e.job.failed {
			im.keys++
			im.members += e.job.members
		}
	}
	im.inFlight = im.inFlight[:0]
	return nil
}

// selectDB makes db the node's current database for the commands queued
// next.
func (im *importer) selectDB(db int) error {
	if db == im.curDB {
		return nil
	}
	im.curDB = db
	return im.queue(nil, false, []byte("SELECT"), []byte(strconv.Itoa(db)))
}

// restore queues RESTORE key ttl payload REPLACE [ABSTTL].
func (im *importer) restore(job *keyJob, ttl int64, abs bool, payload []byte) error {
	args := [][]byte{[]byte("RESTORE"), []byte(job.name), []byte(strconv.FormatInt(ttl, 10)), payload, []byte("REPLACE")}
	if abs {
		args = append(args, []byte("ABSTTL"))
	}
	return im.queue(job, true, args...)
}

// importMaxBytes bounds one command the import sends: a set whose
// payload is larger travels in ZADDs, and a chunk's ZADD is split so that
// its arguments stay under it (a cluster takes log entries of 1 MiB at
// most).
const importMaxBytes = 512 << 10

// zadd queues ZADD key score member ... for a chunk of a big set: more
// than one when the chunk's members pass importMaxBytes.
func (im *importer) zadd(job *keyJob, scores [][]byte, members [][]byte) error {
	for len(members) > 0 {
		args := [][]byte{[]byte("ZADD"), []byte(job.name)}
		size := 0
		n := 0
		for ; n < len(members) && (n == 0 || size+len(scores[n])+len(members[n]) <= importMaxBytes); n++ {
			size += len(scores[n]) + len(members[n])
			args = append(args, scores[n], members[n])
		}
		if err := im.queue(job, false, args...); err != nil {
			return err
		}
		scores, members = scores[n:], members[n:]
	}
	return nil
}

// progress redraws the progress line on a terminal, at most five times a
// second; elsewhere (a log file) it writes a line every ten seconds.
func (im *importer) progress(line func() string) {
	if im.o.quiet {
		return
	}
	if im.tty == 0 {
		im.tty = 2
		if st, err := os.Stderr.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			im.tty = 1
		}
	}
	if im.tty == 1 {
		im.line = line
		if time.Since(im.lastShow) >= 200*time.Millisecond {
			im.lastShow = time.Now()
			im.shown = true
			fmt.Fprintf(os.Stderr, "\r\033[K%s", line())
		}
		return
	}
	if im.lastShow.IsZero() {
		im.lastShow = time.Now()
	}
	if time.Since(im.lastShow) >= 10*time.Second {
		im.lastShow = time.Now()
		fmt.Fprintln(os.Stderr, "goblind import:", line())
	}
}

// progressDone draws the terminal's progress line a last time.
func (im *importer) progressDone() {
	if im.shown {
		fmt.Fprintf(os.Stderr, "\r\033[K%s\n", im.line())
	}
}

// report prints the outcome, one fact a line.
func (im *importer) report(w io.Writer) {
	fmt.Fprintf(w, "imported keys: %d\n", im.keys)
	fmt.Fprintf(w, "imported members: %d\n", im.members)
	kinds := make([]string, 0, len(im.skipped))
	var n int64
	for k, c := range im.skipped {
		kinds = append(kinds, fmt.Sprintf("%s=%d", k, c))
		n += c
	}
	sort.Strings(kinds)
	fmt.Fprintf(w, "skipped keys: %s\n", strings.Join(append([]string{strconv.FormatInt(n, 10)}, kinds...), " "))
	fmt.Fprintf(w, "expired keys: %d\n", im.expired)
	fmt.Fprintf(w, "failed keys: %d\n", im.errors)
	for _, e := range im.firstErr {
		fmt.Fprintf(w, "  %s\n", e)
	}
	if len(im.otherDBs) > 0 {
		dbs := make([]string, len(im.otherDBs))
		for i, n := range im.otherDBs {
			dbs[i] = strconv.Itoa(n)
		}
		fmt.Fprintf(w, "not imported: databases %s of the server hold keys too; import each with /N at the end of the --from URL\n", strings.Join(dbs, " "))
	}
	fmt.Fprintf(w, "time: %s\n", time.Since(im.start).Round(time.Millisecond))
}

func bytesText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
