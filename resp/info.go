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

// infoSections in the order INFO prints them; "default" prints them all
// except those marked extra.
var infoSections = []struct {
	name  string
	extra bool
	fn    func(s *Server, b *strings.Builder)
}{
	{"server", false, infoServer},
	{"clients", false, infoClients},
	{"memory", false, infoMemory},
	{"persistence", false, infoPersistence},
	{"stats", false, infoStats},
	{"replication", false, infoReplication},
	{"cpu", false, infoCPU},
	{"commandstats", true, infoCommandStats},
	{"cluster", false, infoCluster},
	{"raft", false, infoRaft},
	{"keyspace", false, infoKeyspace},
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
			fmt.Fprintf(&b, "# %s\r\n", strings.ToUpper(sec.name[:1])+sec.name[1:])
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
	s.mu.Lock()
	n := len(s.clients)
	s.mu.Unlock()
	kv(b, "connected_clients", n)
	kv(b, "maxclients", s.MaxClients())
	kv(b, "blocked_clients", s.blocked.count.Load())
}

func infoMemory(s *Server, b *strings.Builder) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	dataset := 0
	keys := 0
	s.backend.View(func(ks *keyspace.Keyspace, _ int64) {
		for i := 0; i < keyspace.NumDBs; i++ {
			ks.DB(i).Each(0, func(k string, e *keyspace.Entry) bool {
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
	kv(b, "used_memory_rss", rss())
	kv(b, "used_memory_dataset", dataset)
	kv(b, "used_memory_dataset_keys", keys)
	kv(b, "used_memory_sys", ms.Sys)
	var maxmemory int64
	if mb := s.mem; mb != nil {
		maxmemory = mb.MaxMemory()
	}
	kv(b, "maxmemory", maxmemory)
	kv(b, "maxmemory_human", human(uint64(maxmemory)))
	kv(b, "maxmemory_policy", "noeviction")
	kv(b, "mem_allocator", "go")
}

func human(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2fG", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2fM", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.2fK", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}

// rss reads the resident set size from /proc (0 where unavailable).
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
	kv(b, "total_connections_received", s.stats.connections.Load())
	kv(b, "total_commands_processed", s.stats.commands.Load())
	kv(b, "rejected_connections", s.stats.rejectedConns.Load())
	kv(b, "rejected_calls", s.stats.rejected.Load())
	kv(b, "total_error_replies", s.stats.errors.Load())
	infoACLStats(s, b)
}

func infoCPU(s *Server, b *strings.Builder) {
	kv(b, "goroutines", runtime.NumGoroutine())
}

func infoCommandStats(s *Server, b *strings.Builder) {
	var names []string
	counts := map[string]int64{}
	s.stats.perCommand.Range(func(k, v any) bool {
		n := v.(interface{ Load() int64 }).Load()
		if n == 0 { // looked up, but refused before it ran
			return true
		}
		names = append(names, k.(string))
		counts[k.(string)] = n
		return true
	})
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(b, "cmdstat_%s:calls=%d,usec=0,usec_per_call=0.00,rejected_calls=0,failed_calls=0\r\n", n, counts[n])
	}
}

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
