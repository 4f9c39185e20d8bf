package resp

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/goblindb/goblin/command"
	"github.com/goblindb/goblin/node"
)

// A Goblin cluster is one Raft group holding every key, so to Redis
// Cluster clients it is one shard owning all 16384 slots: the leader is
// the master and every other node a replica. Clients that follow these
// views (go-redis's ClusterClient, redis-py's RedisCluster) send writes
// to the leader and, with READONLY, reads to followers. Goblin never
// answers MOVED: any node accepts any key, forwarding writes itself.

// numSlots is Redis Cluster's hash slot count.
const numSlots = 16384

// view is one node as the cluster commands present it.
type view struct {
	id       string // Goblin node ID
	hexID    string // 40-hex Redis Cluster node ID derived from id
	host     string
	port     int
	cport    int // the Raft port stands in for the cluster bus port
	self     bool
	master   bool
	alive    bool
	inConfig bool
	applied  uint64
}

// nodeHexID derives a Redis Cluster node ID (40 hex digits) from a Goblin
// node ID, stable across restarts.
func nodeHexID(id string) string {
	sum := sha1.Sum([]byte("goblin-node:" + id))
	return hex.EncodeToString(sum[:])
}

// shardID is the one shard's ID.
var shardID = func() string {
	sum := sha1.Sum([]byte("goblin-shard"))
	return hex.EncodeToString(sum[:])
}()

func splitAddr(addr string) (string, int) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0
	}
	port, _ := strconv.Atoi(p)
	return host, port
}

// views lists the nodes of the Raft configuration (and this node), leader
// first, then by ID. This node's own address, when gossip has none, is
// the port of tlsClient's kind, as Redis 7.2 answers TLS clients with TLS
// ports.
func (s *Server) views(st node.Status, tlsClient bool) []view {
	var out []view
	for _, ns := range st.Nodes {
		if ns.Suffrage == "none" && !ns.Self {
			continue // known to gossip, not (yet) a member
		}
		v := view{
			id: ns.ID, hexID: nodeHexID(ns.ID), self: ns.Self, master: ns.Leader,
			alive: ns.Self || ns.Gossip == "alive", inConfig: ns.Suffrage != "none", applied: ns.Applied,
		}
		addr := ns.Addr
		if tlsClient && ns.TLSAddr != "" {
			addr = ns.TLSAddr
		}
		if addr == "" && ns.Self {
			addr = s.selfAddr(tlsClient)
		}
		v.host, v.port = splitAddr(addr)
		_, v.cport = splitAddr(ns.RaftAddr)
		if v.master {
			out = append([]view{v}, out...)
		} else {
			out = append(out, v)
		}
	}
	return out
}

// cmdRole answers ROLE as Redis does: a leader is a master listing its
// replicas, a follower a replica of the leader. Offsets are log indexes.
func cmdRole(c *client, argv [][]byte) {
	st := c.s.backend.Status()
	vs := c.s.views(st, c.isTLS())
	c.reply(func(w *command.Writer) {
		if st.Role == "master" {
			w.Array(3)
			w.BulkString("master")
			w.Int(int64(st.CommitIndex))
			var reps []view
			for _, v := range vs {
				if !v.self && v.alive && v.host != "" {
					reps = append(reps, v)
				}
			}
			w.Array(len(reps))
			for _, v := range reps {
				w.Array(3)
				w.BulkString(v.host)
				w.BulkString(strconv.Itoa(v.port))
				w.BulkString(strconv.FormatUint(v.applied, 10))
			}
			return
		}
		leaderAddr := st.LeaderAddr
		if c.isTLS() && st.LeaderTLSAddr != "" {
			leaderAddr = st.LeaderTLSAddr
		}
		host, port := splitAddr(leaderAddr)
		state := "connected"
		if st.LeaderID == "" {
			state = "connect"
		}
		w.Array(5)
		w.BulkString("slave")
		w.BulkString(host)
		w.Int(int64(port))
		w.BulkString(state)
		w.Int(int64(st.Applied))
	})
}

func cmdCluster(c *client, argv [][]byte) {
	sub := strings.ToLower(string(argv[1]))
	n := len(argv)
	st := c.s.backend.Status()
	switch {
	case sub == "info" && n == 2:
		clusterInfo(c, st)
	case sub == "myid" && n == 2:
		c.reply(func(w *command.Writer) { w.BulkString(nodeHexID(st.ID)) })
	case sub == "myshardid" && n == 2:
		c.reply(func(w *command.Writer) { w.BulkString(shardID) })
	case sub == "nodes" && n == 2:
		clusterNodes(c, st)
	case sub == "slots" && n == 2:
		clusterSlots(c, st)
	case sub == "shards" && n == 2:
		clusterShards(c, st)
	case sub == "keyslot" && n == 3:
		c.reply(func(w *command.Writer) { w.Int(int64(keySlot(argv[2]))) })
	case sub == "help" && n == 2:
		clusterHelp(c)
	case clusterArity[sub] != 0:
		// As Redis 7.2's command table checks a subcommand's arity.
		c.replyError(command.Errorf("ERR wrong number of arguments for 'cluster|%s' command", sub))
	default:
		name := argv[1]
		if len(name) > 128 {
			name = name[:128]
		}
		c.replyError(command.Errorf("ERR unknown subcommand '%s'. Try CLUSTER HELP.", name))
	}
}

// clusterArity is the arity of the CLUSTER subcommands served.
var clusterArity = map[string]int{
	"info": 2, "myid": 2, "myshardid": 2, "nodes": 2, "slots": 2, "shards": 2, "keyslot": 3, "help": 2,
}

func clusterHelp(c *client) {
	lines := []string{
		"CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"INFO", "    Return information about the cluster.",
		"MYID", "    Return the node id.",
		"MYSHARDID", "    Return the node's shard id.",
		"NODES", "    Return cluster configuration seen by node.",
		"SLOTS", "    Return information about slots range mappings.",
		"SHARDS", "    Return information about slot range mappings and the nodes associated with them.",
		"KEYSLOT <key>", "    Return the hash slot for <key>.",
		"HELP", "    Print this help.",
	}
	c.reply(func(w *command.Writer) {
		w.Array(len(lines))
		for _, l := range lines {
			w.Simple(l)
		}
	})
}

func clusterInfo(c *client, st node.Status) {
	vs := c.s.views(st, c.isTLS())
	state := "ok"
	if st.LeaderID == "" {
		state = "fail"
	}
	assigned := numSlots
	if state != "ok" {
		assigned = 0
	}
	var b strings.Builder
	kv(&b, "cluster_state", state)
	kv(&b, "cluster_slots_assigned", assigned)
	kv(&b, "cluster_slots_ok", assigned)
	kv(&b, "cluster_slots_pfail", 0)
	kv(&b, "cluster_slots_fail", 0)
	kv(&b, "cluster_known_nodes", len(vs))
	kv(&b, "cluster_size", 1)
	kv(&b, "cluster_current_epoch", st.Term)
	kv(&b, "cluster_my_epoch", st.Term)
	kv(&b, "cluster_stats_messages_sent", 0)
	kv(&b, "cluster_stats_messages_received", 0)
	kv(&b, "total_cluster_links_buffer_limit_exceeded", 0)
	c.reply(func(w *command.Writer) { w.Verbatim(b.String()) })
}

// clusterNodes writes CLUSTER NODES: one line per node in Redis's format.
func clusterNodes(c *client, st node.Status) {
	vs := c.s.views(st, c.isTLS())
	master := "-"
	for _, v := range vs {
		if v.master {
			master = v.hexID
		}
	}
	var b strings.Builder
	for _, v := range vs {
		var flags []string
		if v.self {
			flags = append(flags, "myself")
		}
		if v.master {
			flags = append(flags, "master")
		} else {
			flags = append(flags, "slave")
		}
		if !v.alive {
			flags = append(flags, "fail")
		}
		if v.host == "" {
			flags = append(flags, "noaddr")
		}
		of, link, slots := master, "connected", ""
		if v.master {
			of, slots = "-", fmt.Sprintf(" 0-%d", numSlots-1)
		}
		if !v.alive {
			link = "disconnected"
		}
		fmt.Fprintf(&b, "%s %s:%d@%d %s %s 0 0 %d %s%s\n",
			v.hexID, v.host, v.port, v.cport, strings.Join(flags, ","), of, st.Term, link, slots)
	}
	c.reply(func(w *command.Writer) { w.Verbatim(b.String()) })
}

// clusterSlots writes CLUSTER SLOTS: one range, the leader first, then
// the live followers. With no leader known there is no range.
func clusterSlots(c *client, st node.Status) {
	vs := servable(c.s.views(st, c.isTLS()))
	c.reply(func(w *command.Writer) {
		if len(vs) == 0 || !vs[0].master {
			w.Array(0)
			return
		}
		w.Array(1)
		w.Array(2 + len(vs))
		w.Int(0)
		w.Int(numSlots - 1)
		for _, v := range vs {
			w.Array(4)
			w.BulkString(v.host)
			w.Int(int64(v.port))
			w.BulkString(v.hexID)
			w.Map(0)
		}
	})
}

// servable keeps the nodes a client can be sent to: with an address, in
// the configuration, alive (Redis leaves failed replicas out of SLOTS).
func servable(vs []view) []view {
	var out []view
	for _, v := range vs {
		if v.host != "" && v.alive && v.inConfig {
			out = append(out, v)
		}
	}
	return out
}

// clusterShards writes CLUSTER SHARDS: the one shard and its nodes.
func clusterShards(c *client, st node.Status) {
	vs := c.s.views(st, c.isTLS())
	c.reply(func(w *command.Writer) {
		w.Array(1)
		w.Map(2)
		w.BulkString("slots")
		if len(vs) > 0 && vs[0].master {
			w.Array(2)
			w.Int(0)
			w.Int(numSlots - 1)
		} else {
			w.Array(0)
		}
		w.BulkString("nodes")
		w.Array(len(vs))
		for _, v := range vs {
			role, health := "replica", "online"
			if v.master {
				role = "master"
			}
			if !v.alive {
				health = "failed"
			}
			w.Map(7)
			w.BulkString("id")
			w.BulkString(v.hexID)
			w.BulkString("port")
			w.Int(int64(v.port))
			w.BulkString("ip")
			w.BulkString(v.host)
			w.BulkString("endpoint")
			w.BulkString(v.host)
			w.BulkString("role")
			w.BulkString(role)
			w.BulkString("replication-offset")
			w.Int(int64(v.applied))
			w.BulkString("health")
			w.BulkString(health)
		}
	})
}
