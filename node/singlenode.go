package node

import (
	"fmt"
	"strings"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// singleNodeID is the ID a single node (no cluster, no peer) runs under
// on its data directory. Raft elects only a voter of the directory's
// configuration, so a node started under another ID than the one the
// directory was created with would never lead, and answer CLUSTERDOWN
// forever. goblind derives the ID from the Raft address when none is
// given, which follows --addr: a single node restarted on another port
// would be such a node.
//
// A directory whose configuration holds this ID as a voter, or none
// (a new node), runs under id. One whose only voter is another node runs
// under that one's ID when the operator chose none (adopt); with an ID of
// the operator's own, and for a directory holding a cluster's
// configuration, the start is refused, saying which ID or flags would
// start it.
func singleNodeID(st *stores, snaps *snapshotStore, id string, adopt bool, logger hclog.Logger) (string, error) {
	conf, _, _, err := lastConfiguration(st, snaps)
	if err != nil {
		return "", err
	}
	if len(conf.Servers) == 0 {
		return id, nil
	}
	var voters []string
	for _, s := range conf.Servers {
		if s.Suffrage == raft.Voter {
			if string(s.ID) == id {
				return id, nil
			}
			voters = append(voters, string(s.ID))
		}
	}
	if len(conf.Servers) == 1 && len(voters) == 1 {
		if adopt {
			logger.Info("the data directory is a single node's created under another ID: keeping that ID", "id", voters[0], "derived-id", id)
			return voters[0], nil
		}
		return "", fmt.Errorf("node: the data directory holds the state of single node %q, not of %q: start it with --id %s (or without --id), or give --data a new directory", voters[0], id, voters[0])
	}
	return "", fmt.Errorf("node: the data directory holds the state of a cluster of %d servers (voters: %s), not of a single node: start it with the cluster's flags (--join, and --id as before), or give --data a new directory",
		len(conf.Servers), strings.Join(voters, ", "))
}
