package resp

import (
	"strconv"
	"strings"

	"github.com/goblindb/goblin/node"
)

// infoReplication writes INFO replication in Redis's shape (so tools that
// read role, master_host or slaveN lines work) followed by Goblin's own
// fields. Offsets are log indexes: the leader's commit index, a follower's
// applied index. On the leader, each follower's lag is how many committed
// entries it has yet to apply, as of its last progress report.
func infoReplication(s *Server, b *strings.Builder) {
	st := s.backend.Status()
	vs := s.views(st, false)
	kv(b, "role", st.Role)
	if st.Role == "master" {
		var reps []view
		for _, v := range vs {
			if !v.self && v.alive && v.host != "" {
				reps = append(reps, v)
			}
		}
		kv(b, "connected_slaves", len(reps))
		for i, v := range reps {
			since := sinceReport(st, v.id)
			lag := "0"
			if since >= 0 {
				lag = strconv.Itoa(since / 1000)
			}
			kv(b, "slave"+strconv.Itoa(i), "ip="+v.host+",port="+strconv.Itoa(v.port)+",state=online,offset="+strconv.FormatUint(v.applied, 10)+",lag="+lag)
		}
		kv(b, "master_failover_state", "no-failover")
		kv(b, "master_replid", shardID)
		kv(b, "master_repl_offset", st.CommitIndex)
	} else {
		host, port := splitAddr(st.LeaderAddr)
		link := "up"
		if st.LeaderID == "" || st.LastContact < 0 {
			link = "down"
		}
		kv(b, "master_host", host)
		kv(b, "master_port", port)
		kv(b, "master_link_status", link)
		io := -1
		if st.LastContact >= 0 {
			io = int(st.LastContact.Seconds())
		}
		kv(b, "master_last_io_seconds_ago", io)
		kv(b, "master_sync_in_progress", 0)
		kv(b, "slave_read_repl_offset", st.Applied)
		kv(b, "slave_repl_offset", st.Applied)
		kv(b, "slave_priority", 100)
		kv(b, "slave_read_only", 1)
		kv(b, "connected_slaves", 0)
		kv(b, "master_replid", shardID)
		kv(b, "master_repl_offset", st.Applied)
	}
	kv(b, "goblin_id", st.ID)
	kv(b, "goblin_raft_state", st.State)
	kv(b, "goblin_leader_id", st.LeaderID)
	kv(b, "goblin_leader_addr", st.LeaderAddr)
	kv(b, "goblin_term", st.Term)
	kv(b, "goblin_commit_index", st.CommitIndex)
	kv(b, "goblin_applied_index", st.Applied)
	if st.Role == "master" {
		i := 0
		for _, ns := range st.Nodes {
			if ns.Self {
				continue
			}
			lag := "unknown"
			if ns.Since >= 0 && st.CommitIndex >= ns.Applied {
				lag = strconv.FormatUint(st.CommitIndex-ns.Applied, 10)
			}
			report := "never"
			if ns.Since >= 0 {
				report = strconv.FormatInt(ns.Since.Milliseconds(), 10)
			}
			kv(b, "goblin_follower"+strconv.Itoa(i), "id="+ns.ID+",addr="+ns.Addr+",suffrage="+ns.Suffrage+
				",gossip="+ns.Gossip+",applied="+strconv.FormatUint(ns.Applied, 10)+",lag="+lag+",last_report_ms="+report)
			i++
		}
	}
}

// sinceReport returns the milliseconds since the node last reported its
// progress, or -1.
func sinceReport(st node.Status, id string) int {
	for _, ns := range st.Nodes {
		if ns.ID == id && ns.Since >= 0 {
			return int(ns.Since.Milliseconds())
		}
	}
	return -1
}

// infoCluster writes INFO cluster: enabled in cluster mode, as
// redis_mode, CONFIG GET cluster-enabled and HELLO say.
func infoCluster(s *Server, b *strings.Builder) {
	enabled := 0
	if s.backend.Status().Clustered {
		enabled = 1
	}
	kv(b, "cluster_enabled", enabled)
}
