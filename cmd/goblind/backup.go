package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/goblindb/goblin/backup"
	"github.com/goblindb/goblin/internal/durable"
)

// goblind backup takes a backup of a running node, leader or follower,
// with GOBLIN BACKUP: the node writes it to a file in its data directory
// and sends it as one bulk string, which is written to -o as it arrives
// (into FILE.tmp, renamed once complete and verified). With --verify it
// checks a backup file instead: checksums, every set decoded, the digest
// recomputed; both print the backup's metadata.
//
//	goblind backup [--addr HOST:PORT] [--user U] [--pass P] [TLS flags] -o FILE
//	goblind backup --verify FILE

// nodeFlags are the flags that reach a node: address, user, password,
// TLS (as goblind ping's).
type nodeFlags struct {
	addr, user, pass string
	timeout          time.Duration
	tls              *pingTLS
}

func registerNodeFlags(fs *flag.FlagSet) (*nodeFlags, error) {
	nf := &nodeFlags{}
	fs.StringVar(&nf.addr, "addr", envOr("GOBLIN_ADDR", "127.0.0.1:6379"), "node to talk to: any node of the cluster")
	defPass, _, err := envValue("GOBLIN_REQUIREPASS", false)
	if err != nil {
		return nil, fmt.Errorf("GOBLIN_REQUIREPASS_FILE: %w", err)
	}
	fs.StringVar(&nf.user, "user", "", "ACL user to authenticate as (with --pass); it needs @admin")
	fs.StringVar(&nf.pass, "pass", defPass, "password (default: GOBLIN_REQUIREPASS, or the file GOBLIN_REQUIREPASS_FILE names)")
	fs.StringVar(&nf.pass, "requirepass", defPass, "the same as --pass")
	fs.DurationVar(&nf.timeout, "connect-timeout", 10*time.Second, "give up connecting after")
	nf.tls = registerPingTLS(fs)
	return nf, nil
}

func (nf *nodeFlags) dial(fs *flag.FlagSet) (*respClient, error) {
	var tlsConfig *tls.Config
	tlsConfig, err := nf.tls.config(fs, &nf.addr)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), nf.timeout)
	defer cancel()
	c, err := dialRESP(ctx, nf.addr, tlsConfig, nf.user, nf.pass)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", nf.addr, err)
	}
	return c, nil
}

// parseWithArgs parses flags given before and after positional arguments
// (goblind restore FILE --data DIR) and returns the positional ones.
func parseWithArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseArgs(fs, args, os.Stdout); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func backupCmd(args []string) int {
	fs := flag.NewFlagSet("goblind backup", flag.ContinueOnError)
	out := fs.String("o", "", "file to write the backup to")
	verify := fs.String("verify", "", "check this backup file and print its metadata, instead of taking a backup")
	noVerify := fs.Bool("no-verify", false, "do not verify the backup once received (it is checked whole otherwise: the state decoded in memory)")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	nf, err := registerNodeFlags(fs)
	if err != nil {
		fmt.Fprintln(os.Stderr, "goblind backup:", err)
		return 2
	}
	pos, err := parseWithArgs(fs, args)
	if err != nil {
		return exitParse(err)
	}
	if len(pos) > 0 {
		fmt.Fprintf(os.Stderr, "goblind backup: unexpected argument %q\n", pos[0])
		return 2
	}
	if *verify != "" {
		return verifyCmd(*verify)
	}
	if *out == "" {
		fmt.Fprintln(os.Stderr, "goblind backup: -o FILE is required (or --verify FILE)")
		return 2
	}
	m, err := takeBackup(fs, nf, *out, !*noVerify, !*quiet)
	if err != nil {
		fmt.Fprintln(os.Stderr, "goblind backup:", err)
		return 1
	}
	printMeta(os.Stdout, *out, m)
	return 0
}

// verifyCmd is goblind backup --verify FILE.
func verifyCmd(path string) int {
	m, err := verifyFile(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "goblind backup: %s: %v\n", path, err)
		return 1
	}
	printMeta(os.Stdout, path, m)
	fmt.Println("verified: checksums, every sorted set decoded, digest recomputed")
	return 0
}

func verifyFile(path string) (*backup.Meta, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, _, err := backup.Read(bufio.NewReaderSize(f, 1<<20))
	return m, err
}

// takeBackup asks the node for a backup and writes it to path.
func takeBackup(fs *flag.FlagSet, nf *nodeFlags, path string, verify, progress bool) (*backup.Meta, error) {
	c, err := nf.dial(fs)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if err := c.sendStrings("GOBLIN", "BACKUP"); err != nil {
		return nil, err
	}
	if err := c.flush(); err != nil {
		return nil, err
	}
	if progress {
		fmt.Fprintf(os.Stderr, "waiting for %s to write the backup...\n", nf.addr)
	}
	line, err := c.r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimRight(line, "\r\n")
	if strings.HasPrefix(line, "-") {
		return nil, errors.New(line[1:])
	}
	size, err := strconv.ParseInt(strings.TrimPrefix(line, "$"), 10, 64)
	if !strings.HasPrefix(line, "$") || err != nil || size < 0 {
		return nil, fmt.Errorf("unexpected reply %q", line)
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp)
	defer f.Close()
	var got atomic.Int64
	stop := startProgress(progress && size >= progressMin, "received", size, &got)
	bw := bufio.NewWriterSize(f, 1<<20)
	_, err = io.Copy(bw, io.TeeReader(io.LimitReader(c.r, size), counter{&got}))
	stop()
	if err == nil && got.Load() != size {
		err = fmt.Errorf("connection closed after %d of %d bytes", got.Load(), size)
	}
	if err != nil {
		return nil, err
	}
	var crlf [2]byte
	if _, err := io.ReadFull(c.r, crlf[:]); err != nil || string(crlf[:]) != "\r\n" {
		return nil, errors.New("malformed reply: the bulk string does not end")
	}
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	if err := f.Sync(); err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	var m *backup.Meta
	if verify {
		if progress {
			fmt.Fprintln(os.Stderr, "verifying...")
		}
		m, err = verifyFile(tmp)
	} else {
		rf, err2 := os.Open(tmp)
		if err2 != nil {
			return nil, err2
		}
		m, err = backup.ReadMeta(bufio.NewReader(rf))
		rf.Close()
		if m != nil {
			m.Size = size
		}
	}
	if err != nil {
		return nil, fmt.Errorf("the backup received does not verify: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, err
	}
	durable.SyncDir(filepath.Dir(path)) // the rename is done; a failed sync only weakens it
	return m, nil
}

// progressMin is the size from which transfers report progress.
const progressMin = 8 << 20

type counter struct{ n *atomic.Int64 }

func (c counter) Write(p []byte) (int, error) {
	c.n.Add(int64(len(p)))
	return len(p), nil
}

// startProgress prints what has moved every two seconds on stderr, until
// the returned function is called.
func startProgress(on bool, verb string, total int64, done *atomic.Int64) (stop func()) {
	if !on {
		return func() {}
	}
	quit := make(chan struct{})
	finished := make(chan struct{})
	start := time.Now()
	report := func() {
		n := done.Load()
		rate := float64(n) / time.Since(start).Seconds() / (1 << 20)
		fmt.Fprintf(os.Stderr, "%s %.1f of %.1f MiB (%.0f%%), %.1f MiB/s\n", verb,
			float64(n)/(1<<20), float64(total)/(1<<20), 100*float64(n)/float64(max(total, 1)), rate)
	}
	go func() {
		defer close(finished)
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-quit:
				report()
				return
			case <-t.C:
				report()
			}
		}
	}()
	return func() {
		close(quit)
		<-finished
	}
}

// printMeta prints a backup's metadata.
func printMeta(w io.Writer, path string, m *backup.Meta) {
	uncompressed := "" // known once the whole file is read; a restore into a running node reads its header
	if m.SnapshotSize > 0 {
		uncompressed = fmt.Sprintf(", %d bytes uncompressed", m.SnapshotSize)
	}
	fmt.Fprintf(w, "backup:    %s (%d bytes; format %d, snapshot format %d%s)\n", path, m.Size, m.Version, m.SnapshotVersion, uncompressed)
	fmt.Fprintf(w, "node:      %s\n", m.Node)
	fmt.Fprintf(w, "created:   %s\n", m.Created.UTC().Format(time.RFC3339Nano))
	fmt.Fprintf(w, "index:     %d (term %d)\n", m.Index, m.Term)
	fmt.Fprintf(w, "digest:    %s\n", m.Digest)
	c := m.Counts
	fmt.Fprintf(w, "keys:      %d (%d with a time to live), %d members\n", c.Keys, c.Expires, c.Members)
	for _, lc := range c.Layouts {
		fmt.Fprintf(w, "layout:    %s: %d keys, %d members\n", lc.Layout, lc.Keys, lc.Members)
	}
	for _, r := range m.Rules {
		fmt.Fprintf(w, "rule:      --packed '%s=%s'\n", r.Pattern, r.Layout)
	}
	if c.Users < 0 {
		fmt.Fprintln(w, "acl users: none replicated (each node enforces its own --requirepass or --aclfile)")
	} else {
		fmt.Fprintf(w, "acl users: %d\n", c.Users)
	}
}
