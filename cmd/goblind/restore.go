package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync/atomic"

	"github.com/goblindb/goblin/backup"
	"github.com/goblindb/goblin/node"
)

// goblind restore seeds a new node's data directory with a backup, or
// restores one into a running cluster:
//
//	goblind restore FILE --data DIR
//	goblind restore FILE --addr HOST:PORT [--force] [--user U] [--pass P] [TLS flags]
//
// With --data, the backup is verified and left in DIR as restore.pending;
// DIR must hold no node's state. A node started on DIR (a single node, or
// one node, or every node, of a new cluster started with
// --bootstrap-expect) restores it as the cluster's first leader, before
// it serves anything. With --addr, the backup is sent to the node with
// GOBLIN RESTORE, which refuses a cluster that holds keys unless --force.

// maxOnlineRestore is the largest backup GOBLIN RESTORE takes: Redis's
// largest bulk string (proto-max-bulk-len).
const maxOnlineRestore = 512 << 20

func restoreCmd(args []string) int {
	fs := flag.NewFlagSet("goblind restore", flag.ContinueOnError)
	data := fs.String("data", "", "data directory of the new node to seed (it must hold no node's state)")
	force := fs.Bool("force", false, "with --addr: replace the data of a cluster that holds keys")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	nf, err := registerNodeFlags(fs)
	if err != nil {
		fmt.Fprintln(os.Stderr, "goblind restore:", err)
		return 2
	}
	pos, err := parseWithArgs(fs, args)
	if err != nil {
		return exitParse(err)
	}
	addrSet := false
	fs.Visit(func(f *flag.Flag) { addrSet = addrSet || f.Name == "addr" })
	switch {
	case len(pos) != 1:
		fmt.Fprintln(os.Stderr, "goblind restore: give one backup file: goblind restore FILE --data DIR, or goblind restore FILE --addr HOST:PORT")
		return 2
	case (*data == "") == !addrSet:
		fmt.Fprintln(os.Stderr, "goblind restore: give one of --data DIR (a new node) or --addr HOST:PORT (a running cluster)")
		return 2
	case *force && *data != "":
		fmt.Fprintln(os.Stderr, "goblind restore: --force goes with --addr")
		return 2
	}
	file := pos[0]
	if *data != "" {
		return seedCmd(file, *data)
	}
	m, err := restoreOnline(fs, nf, file, *force, !*quiet)
	if err != nil {
		fmt.Fprintln(os.Stderr, "goblind restore:", err)
		return 1
	}
	printMeta(os.Stdout, file, m)
	return 0
}

// seedCmd is goblind restore FILE --data DIR.
func seedCmd(file, dir string) int {
	f, err := os.Open(file)
	if err != nil {
		fmt.Fprintln(os.Stderr, "goblind restore:", err)
		return 1
	}
	defer f.Close()
	dd, err := lockDataDir(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "goblind restore:", err)
		return 1
	}
	m, err := node.SeedRestore(dir, bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		dd.discardNew() // a refused restore leaves nothing behind
		fmt.Fprintf(os.Stderr, "goblind restore: %s: %v\n", file, err)
		return 1
	}
	dd.unlock()
	printMeta(os.Stdout, file, m)
	fmt.Printf("\nverified, and waiting in %s for the node started there: the cluster's first leader restores it\n", dir)
	fmt.Printf("before it serves anything. Then GOBLIN DIGEST answers %s on every node.\n", m.Digest)
	if len(m.Rules) > 0 {
		fmt.Println("Start the nodes with the backup's --packed rules (above) to keep them for new keys.")
	}
	return 0
}

// restoreOnline sends the backup to a running node with GOBLIN RESTORE,
// then checks the node's digest.
func restoreOnline(fs *flag.FlagSet, nf *nodeFlags, path string, force, progress bool) (*backup.Meta, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	if size > maxOnlineRestore {
		return nil, fmt.Errorf("%s is %d bytes: GOBLIN RESTORE takes at most %d (one bulk string); restore it into new nodes with --data instead", path, size, maxOnlineRestore)
	}
	m, err := backup.ReadMeta(bufio.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	m.Size = size
	if _, err := f.Seek(0, 0); err != nil {
		return nil, err
	}
	c, err := nf.dial(fs)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	argc := 3
	if force {
		argc = 4
	}
	fmt.Fprintf(c.w, "*%d\r\n$6\r\nGOBLIN\r\n$7\r\nRESTORE\r\n$%d\r\n", argc, size)
	var sent atomic.Int64
	stop := startProgress(progress && size >= progressMin, "sent", size, &sent)
	_, err = io.Copy(c.w, io.TeeReader(f, counter{&sent}))
	stop()
	if err != nil {
		return nil, err
	}
	c.w.WriteString("\r\n")
	if force {
		c.w.WriteString("$5\r\nFORCE\r\n")
	}
	if err := c.flush(); err != nil {
		return nil, err
	}
	if progress {
		fmt.Fprintf(os.Stderr, "%s is restoring the backup...\n", nf.addr)
	}
	r, err := c.read()
	if err != nil {
		return nil, err
	}
	if r.Kind == '-' {
		return nil, errors.New(string(r.Str))
	}
	d, err := c.do("GOBLIN", "DIGEST")
	switch {
	case err != nil:
		fmt.Fprintf(os.Stderr, "restored; GOBLIN DIGEST: %v\n", err)
	case len(d.Array) == 2 && string(d.Array[1].Str) == m.Digest.String():
		fmt.Fprintf(os.Stderr, "restored: %s answers GOBLIN DIGEST %s at index %s, the backup's digest\n", nf.addr, m.Digest, strconv.FormatInt(d.Array[0].Num, 10))
	case len(d.Array) == 2:
		fmt.Fprintf(os.Stderr, "restored; %s answers GOBLIN DIGEST %s at index %s, not the backup's: something changed the state since (a write, or a key whose time to live ran out)\n",
			nf.addr, d.Array[1].Str, strconv.FormatInt(d.Array[0].Num, 10))
	}
	return m, nil
}
