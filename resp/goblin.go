package resp

import (
	"sort"
	"strings"

	"github.com/goblindb/goblin/command"
	"github.com/goblindb/goblin/node"
)

// cmdGoblin is the operators' family:
//
//	GOBLIN NODES             the nodes, their roles and progress
//	GOBLIN REMOVE <id>       remove a node from the Raft configuration
//	GOBLIN TRANSFER [<id>]   hand leadership to a voter (any, or <id>)
//	GOBLIN RAFTSTATS         hashicorp/raft's statistics
//	GOBLIN DIGEST            [index, digest] of the state (backup.go)
//	GOBLIN BACKUP            a backup of the state, as one bulk string
//	GOBLIN RESTORE <backup> [FORCE]   replace the state with a backup
//
// REMOVE and TRANSFER work on any node: a follower asks the leader.
func cmdGoblin(c *client, argv [][]byte) {
	sub := strings.ToLower(string(argv[1]))
	n := len(argv)
	switch {
	case sub == "nodes" && n == 2:
		goblinNodes(c)
	case sub == "remove" && n == 3:
		c.adminResult(c.clusterAdmin(func(cb ClusterBackend) error { return cb.RemoveServer(string(argv[2])) }))
	case sub == "transfer" && n <= 3:
		id := ""
		if n == 3 {
			id = string(argv[2])
		}
		c.adminResult(c.clusterAdmin(func(cb ClusterBackend) error { return cb.TransferLeadership(id) }))
	case sub == "raftstats" && n == 2:
		goblinRaftStats(c)
	case sub == "digest" && n == 2:
		goblinDigest(c)
	case sub == "backup" && n == 2:
		goblinBackup(c)
	case sub == "restore" && (n == 3 || n == 4):
		goblinRestore(c, argv[2:])
	case sub == "help" && n == 2:
		lines := []string{
			"GOBLIN <subcommand> [<arg> ...]. Subcommands are:",
			"NODES", "    List the nodes: ID, addresses, suffrage, gossip state, applied index.",
			"REMOVE <id>", "    Remove a node from the Raft configuration (for a node that is gone for good).",
			"TRANSFER [<id>]", "    Transfer leadership to the node <id>, or to the most up-to-date voter.",
			"RAFTSTATS", "    Return Raft's statistics.",
			"DIGEST", "    Return the log index of this node's state and the digest of the state at that index.",
			"BACKUP", "    Return a backup of the state (the file goblind backup writes) as one bulk string.",
			"RESTORE <backup> [FORCE]", "    Replace the cluster's state with a backup; refused when the cluster holds keys, unless FORCE.",
			"HELP", "    Print this help.",
		}
		c.reply(func(w *command.Writer) {
			w.Array(len(lines))
			for _, l := range lines {
				w.Simple(l)
			}
		})
	default:
		c.replyError(command.Errorf("ERR unknown subcommand or wrong number of arguments for '%s'. Try GOBLIN HELP.", argv[1]))
	}
}

var errNoCluster = command.Errorf("ERR this node does not run in cluster mode")

func (c *client) clusterAdmin(fn func(cb ClusterBackend) error) error {
	if c.s.cluster == nil {
		return errNoCluster
	}
	return fn(c.s.cluster)
}

func (c *client) adminResult(err error) {
	switch {
	case err == nil:
		c.reply(func(w *command.Writer) { w.OK() })
	case err == node.ErrNoSuchNode:
		c.replyError(command.Errorf("ERR no such node in the cluster configuration"))
	default:
		c.replyError(translate(err))
	}
}

// goblinNodes answers one map per node.
func goblinNodes(c *client) {
	st := c.s.backend.Status()
	c.reply(func(w *command.Writer) {
		w.Array(len(st.Nodes))
		for _, ns := range st.Nodes {
			role := "follower"
			switch {
			case ns.Leader:
				role = "leader"
			case ns.Suffrage == "none" && ns.Gossip == "alive":
				role = "joining" // gossip sees it; the leader adds it
			case ns.Suffrage == "none":
				role = ns.Gossip // left, dead: not in the configuration
			}
			lag := int64(-1)
			if st.Role == "master" && ns.Since >= 0 && st.CommitIndex >= ns.Applied {
				lag = int64(st.CommitIndex - ns.Applied)
			}
			w.Map(9)
			w.BulkString("id")
			w.BulkString(ns.ID)
			w.BulkString("addr")
			w.BulkString(ns.Addr)
			w.BulkString("raft")
			w.BulkString(ns.RaftAddr)
			w.BulkString("role")
			w.BulkString(role)
			w.BulkString("suffrage")
			w.BulkString(ns.Suffrage)
			w.BulkString("gossip")
			w.BulkString(ns.Gossip)
			w.BulkString("self")
			w.Bool(ns.Self)
			w.BulkString("applied")
			w.Int(int64(ns.Applied))
			w.BulkString("lag")
			w.Int(lag)
		}
	})
}

func goblinRaftStats(c *client) {
	st := c.s.backend.Status()
	keys := make([]string, 0, len(st.Raft))
	for k := range st.Raft {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	c.reply(func(w *command.Writer) {
		w.Map(len(keys))
		for _, k := range keys {
			w.BulkString(k)
			w.BulkString(st.Raft[k])
		}
	})
}
