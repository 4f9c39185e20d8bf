package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// cmdMemory samples an engine's memory after a workload: INFO's
// used_memory, the process's resident set (from /proc when the server runs
// on this machine, else INFO's used_memory_rss), and MEMORY USAGE and
// ZCARD of a key.
func cmdMemory(args []string) error {
	fs := newFlagSet("memory")
	var c common
	c.register(fs)
	key := fs.String("key", "wiki:pages", "key to size")
	pid := fs.Int("pid", 0, "server process ID for RSS (default: INFO's process_id)")
	settle := fs.Duration("settle", 2*time.Second, "wait this long first (lets background freeing finish, the same for every engine)")
	workload := fs.String("workload", "replay-rpc", "workload whose aftermath this measures (recorded)")
	if err := fs.Parse(args); err != nil {
		return err
	}

	time.Sleep(*settle)
	cn, err := dial(c.addr)
	if err != nil {
		return err
	}
	defer cn.close()
	info := map[string]string{}
	for _, sec := range []string{"server", "memory"} {
		v, err := cn.do("INFO", sec)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(v.Str), "\n") {
			if k, val, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
				info[k] = val
			}
		}
	}
	r := record{Kind: "memory", Workload: *workload, Key: *key}
	r.UsedMemory, _ = strconv.ParseInt(info["used_memory"], 10, 64)
	if *pid == 0 {
		*pid, _ = strconv.Atoi(info["process_id"])
	}
	if rss, err := procRSS(*pid); err == nil {
		r.RSS = rss
	} else {
		r.RSS, _ = strconv.ParseInt(info["used_memory_rss"], 10, 64)
	}
	card, err := cn.do("ZCARD", *key)
	if err != nil {
		return err
	}
	r.Members = card.Num
	if mu, err := cn.do("MEMORY", "USAGE", *key); err == nil {
		r.KeyBytes = mu.Num
	}
	per := func(b int64) float64 {
		if r.Members == 0 {
			return 0
		}
		return float64(b) / float64(r.Members)
	}
	fmt.Printf("%-14s memory: %d members; used_memory %d (%.1f B/member); RSS %d (%.1f B/member); MEMORY USAGE %s %d (%.1f B/member)\n",
		c.engine, r.Members, r.UsedMemory, per(r.UsedMemory), r.RSS, per(r.RSS), *key, r.KeyBytes, per(r.KeyBytes))
	return c.emit(r)
}

// procRSS reads VmRSS of a local process, in bytes.
func procRSS(pid int) (int64, error) {
	if pid <= 0 {
		return 0, fmt.Errorf("no pid")
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("no VmRSS for pid %d", pid)
}
