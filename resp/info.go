package resp

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/goblindb/goblin/command"
	"github.com/goblindb/goblin/keyspace"
)

// infoSections in the order INFO prints them, with their titles; "default"
// prints those not marked extra, "all" every one.
var infoSections = []struct {
	name, title string
	extra       bool
	fn          func(s *Server, b *strings.Builder)
}{
	{"server", "Server", false, infoServer},
	{"clients", "Clients", false, infoClients},
	{"memory", "Memory", false, infoMemory},
	{"persistence", "Persistence", false, infoPersistence},
	{"stats", "Stats", false, infoStats},
	{"replication", "Replication", false, infoReplication},
	{"cpu", "CPU", false, infoCPU},
	{"commandstats", "Commandstats", true, infoCommandStats},
	{"errorstats", "Errorstats", false, infoErrorStats},
	{"latencystats", "Latencystats", true, infoLatencyStats},
	{"cluster", "Cluster", false, infoCluster},
	{"raft", "Raft", false, infoRaft},
	{"keyspace", "Keyspace", false, infoKeyspace},
}

func cmdInfo(c *client, argv [][]byte) {
	want := map[string]bool{}
	all := false
	for _, a := range argv[1:] {
		s := strings.ToLower(string(a))
		switch s {
		case "all", "everything":
			all = true
		case "default":
			want["default"] = true
		default:
			want[s] = true
		}
	}
	if len(want) == 0 && !all {
		want["default"] = true
	}
	var b strings.Builder
	for _, sec := range infoSections {
		if all || want[sec.name] || (want["default"] && !sec.extra) {
			if b.Len() > 0 {
				b.WriteString("\r\n")
			}
			fmt.Fprintf(&b, "# %s\r\n", sec.title)
			sec.fn(c.s, &b)
		}
	}
	c.reply(func(w *command.Writer) { w.Verbatim(b.String()) })
}

func kv(b *strings.Builder, k string, v any) { fmt.Fprintf(b, "%s:%v\r\n", k, v) }

func infoServer(s *Server, b *strings.Builder) {
	up := time.Since(s.started)
	kv(b, "redis_version", s.cfg.Version)
	kv(b, "goblin_version", s.cfg.Version)
	kv(b, "redis_mode", redisMode(s.backend.Status()))
	kv(b, "os", runtime.GOOS+" "+runtime.GOARCH)
	kv(b, "arch_bits", 64)
	kv(b, "go_version", runtime.Version())
	kv(b, "process_id", os.Getpid())
	kv(b, "run_id", s.cfg.RunID)
	kv(b, "tcp_port", addrPort(s.Addr()))
	kv(b, "uptime_in_seconds", int(up.Seconds()))
	kv(b, "uptime_in_days", int(up.Hours()/24))
	kv(b, "executable", os.Args[0])
}

func portOf(addr string) string {
	if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		return addr[i+1:]
	}
	return addr
}

func infoClients(s *Server, b *strings.Builder) {
	kv(b, "connected_clients", s.ConnectedClients())
	kv(b, "cluster_connections", 0)
	kv(b, "maxclients", s.MaxClients())
	kv(b, "blocked_clients", s.BlockedClients())
	kv(b, "tracking_clients", 0)
	kv(b, "total_blocking_keys", s.blocked.keys())
	kv(b, "total_blocking_keys_on_nokey", 0)
}

// ConnectedClients returns how many client connections are open.
func (s *Server) ConnectedClients() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.clients)
}

// BlockedClients returns how many clients wait in a blocking command.
func (s *Server) BlockedClients() int64 { return s.blocked.count.Load() }

func infoMemory(s *Server, b *strings.Builder) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	dataset := 0
	keys := 0
	s.backend.View(func(ks *keyspace.Keyspace, _ int64) {
		for i := 0; i < keyspace.NumDBs; i++ {
			ks.DB(i).EachUnordered(0, func(k string, e *keyspace.Entry) bool {
				dataset += command.KeyMemory(k, e)
				keys++
				return true
			})
		}
	})
	// used_memory is what maxmemory is compared with: the Go heap's
	// objects (node/memory.go).
	kv(b, "used_memory", ms.HeapAlloc)
	kv(b, "used_memory_human", human(ms.HeapAlloc))
	res := rss()
	kv(b, "used_memory_rss", res)
	kv(b, "used_memory_rss_human", human(res))
	kv(b, "used_memory_dataset", dataset)
	kv(b, "used_memory_dataset_keys", keys)
	kv(b, "used_memory_sys", ms.Sys)
	var maxmemory uint64
	if mb := s.mem; mb != nil {
		maxmemory = mb.MaxMemory()
	}
	// Redis prints maxmemory signed: past 2^63-1 it reads negative.
	kv(b, "maxmemory", int64(maxmemory))
	kv(b, "maxmemory_human", human(maxmemory))
	kv(b, "maxmemory_policy", "noeviction")
	if ms.HeapAlloc > 0 {
		kv(b, "mem_fragmentation_ratio", fmt.Sprintf("%.2f", float64(res)/float64(ms.HeapAlloc)))
	}
	kv(b, "mem_allocator", "go")
}

// human is Redis's bytesToHuman: two decimals of the largest binary unit
// up to P, and plain bytes from 1024 P on.
func human(n uint64) string {
	switch {
	case n >= 1<<60:
		return fmt.Sprintf("%dB", n)
	case n >= 1<<50:
		return fmt.Sprintf("%.2fP", float64(n)/(1<<50))
	case n >= 1<<40:
		return fmt.Sprintf("%.2fT", float64(n)/(1<<40))
	case n >= 1<<30:
		return fmt.Sprintf("%.2fG", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2fM", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.2fK", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}

// RSS returns the process's resident set size in bytes, read from /proc
// (0 where unavailable).
func RSS() uint64 { return rss() }

func rss() uint64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	var size, res uint64
	fmt.Sscan(string(data), &size, &res)
	return res * uint64(os.Getpagesize())
}

// infoPersistence reports the Raft log and snapshots in Redis's fields:
// the log in the AOF's (aof_last_write_status), snapshots in the RDB's
// (rdb_last_bgsave_status), with Goblin's own fields for the errors.
func infoPersistence(s *Server, b *strings.Builder) {
	st := s.backend.Status()
	kv(b, "loading", 0)
	kv(b, "rdb_bgsave_in_progress", 0)
	kv(b, "rdb_last_save_time", unixOrZero(st.LastSnapshot))
	kv(b, "rdb_last_bgsave_status", okOrErr(st.SnapshotErr))
	kv(b, "aof_enabled", 0)
	kv(b, "aof_last_write_status", okOrErr(st.LogWriteErr))
	kv(b, "goblin_persistence", "raft-log")
	kv(b, "goblin_fsync", st.Fsync)
	kv(b, "goblin_failed_log_entries", st.FailedEntries)
	kv(b, "goblin_log_write_error", errText(st.LogWriteErr))
	kv(b, "goblin_log_write_error_since", unixOrZero(st.LogWriteErrSince))
	kv(b, "goblin_snapshot_error", errText(st.SnapshotErr))
	kv(b, "goblin_snapshot_error_since", unixOrZero(st.SnapshotErrSince))
}

func okOrErr(err error) string {
	if err != nil {
		return "err"
	}
	return "ok"
}

// errText is an error as one INFO value: no line breaks.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(err.Error())
}

func unixOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

func infoStats(s *Server, b *strings.Builder) {
	st := &s.stats
	kv(b, "total_connections_received", st.connections.Load())
	kv(b, "total_commands_processed", st.commands.Load())
	kv(b, "instantaneous_ops_per_sec", int64(st.ops.rate(meterOps)))
	kv(b, "total_net_input_bytes", st.netIn.Load())
	kv(b, "total_net_output_bytes", st.netOut.Load())
	kv(b, "instantaneous_input_kbps", fmt.Sprintf("%.2f", st.ops.rate(meterNetIn)/1024))
	kv(b, "instantaneous_output_kbps", fmt.Sprintf("%.2f", st.ops.rate(meterNetOut)/1024))
	kv(b, "rejected_connections", st.rejectedConns.Load())
	kv(b, "expired_keys", s.ExpiredKeys())
	kv(b, "evicted_keys", 0)
	kv(b, "keyspace_hits", st.hits.Load())
	kv(b, "keyspace_misses", st.misses.Load())
	kv(b, "pubsub_channels", 0)
	kv(b, "pubsub_patterns", 0)
	kv(b, "total_error_replies", st.errors.Load())
	infoACLStats(s, b)
	kv(b, "goblin_rejected_calls", st.rejected.Load())
	batches, handOffs := s.loopCounts()
	kv(b, "goblin_event_loop_batches", batches)
	kv(b, "goblin_event_loop_handoffs", handOffs)
}

// ExpiredKeys returns how many keys expired on this node since it started.
func (s *Server) ExpiredKeys() uint64 {
	var n uint64
	s.backend.View(func(ks *keyspace.Keyspace, _ int64) {
		for i := 0; i < keyspace.NumDBs; i++ {
			n += ks.DB(i).ExpiredKeys()
		}
	})
	return n
}

// infoCPU reports the process's CPU time; Goblin forks no children.
func infoCPU(s *Server, b *strings.Builder) {
	sys, user := cpuTimes()
	kv(b, "used_cpu_sys", fmt.Sprintf("%.6f", sys.Seconds()))
	kv(b, "used_cpu_user", fmt.Sprintf("%.6f", user.Seconds()))
	kv(b, "used_cpu_sys_children", "0.000000")
	kv(b, "used_cpu_user_children", "0.000000")
	kv(b, "goroutines", runtime.NumGoroutine())
}

func infoCommandStats(s *Server, b *strings.Builder) {
	for _, cs := range s.Commands() {
		usec := cs.Time.Microseconds()
		perCall := 0.0
		if cs.Calls > 0 {
			perCall = float64(usec) / float64(cs.Calls)
		}
		fmt.Fprintf(b, "cmdstat_%s:calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d\r\n",
			cs.Name, cs.Calls, usec, perCall, cs.Rejected, cs.Failed)
	}
}

func infoErrorStats(s *Server, b *strings.Builder) {
	for _, e := range s.Errors() {
		fmt.Fprintf(b, "errorstat_%s:count=%d\r\n", e.Code, e.Count)
	}
}

// infoLatencyStats prints each command's latency percentiles in
// microseconds, as Redis does: p50, p99 and p99.9, each the upper bound
// of the histogram bucket holding it (internal/hist).
func infoLatencyStats(s *Server, b *strings.Builder) {
	for _, cs := range s.Commands() {
		if cs.Latency.Count == 0 {
			continue
		}
		fmt.Fprintf(b, "latency_percentiles_usec_%s:p50=%.3f,p99=%.3f,p99.9=%.3f\r\n", cs.Name,
			usecs(cs.Latency.Percentile(50)), usecs(cs.Latency.Percentile(99)), usecs(cs.Latency.Percentile(99.9)))
	}
}

func usecs(d time.Duration) float64 { return float64(d) / 1e3 }

func infoRaft(s *Server, b *strings.Builder) {
	st := s.backend.Status()
	keys := make([]string, 0, len(st.Raft))
	for k := range st.Raft {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		kv(b, "raft_"+k, st.Raft[k])
	}
}

func infoKeyspace(s *Server, b *strings.Builder) {
	s.backend.View(func(ks *keyspace.Keyspace, _ int64) {
		for i := 0; i < keyspace.NumDBs; i++ {
			d := ks.DB(i)
			if d.Len() > 0 {
				fmt.Fprintf(b, "db%d:keys=%d,expires=%d,avg_ttl=0\r\n", i, d.Len(), d.Expires())
			}
		}
	})
}
