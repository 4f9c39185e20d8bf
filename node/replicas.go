package node

// Replicas holding a write, for WAIT.
//
// Redis's WAIT counts the replicas that acknowledged a connection's
// writes. A write Goblin acknowledged is committed: a majority of the
// voters hold it in their logs (durably under --fsync always), so at least
// that many nodes other than this one hold it, with no round trip to ask.
// On the leader, followers' progress reports (every half second) tell
// which of them have applied it, and so hold it, beyond that majority.
// The count is what is known, never more than what holds the write.

// ReplicasHolding returns how many nodes of the Raft configuration other
// than this one are known to hold the log up to index, an index this
// node acknowledged as committed (a write's Result.Index), or 0 for
// none: then the nodes that gossip reports alive. A single node has none.
func (n *Node) ReplicasHolding(index uint64) int {
	if n.peers == nil {
		return 0
	}
	conf, err := n.Configuration()
	if err != nil {
		return 0
	}
	inConf := make(map[string]bool, len(conf))
	voters, others := 0, 0
	selfVoter := false
	for _, s := range conf {
		if s.Voter {
			voters++
			selfVoter = selfVoter || s.Current
		}
		if !s.Current {
			others++
			inConf[s.ID] = true
		}
	}
	known := 0
	if index > 0 {
		// A majority of the voters hold every committed entry (the
		// current configuration's too, and so, by Raft's log matching,
		// everything before it); this node may be one of them.
		known = voters/2 + 1
		if selfVoter {
			known--
		}
	}
	reported := 0
	for _, m := range n.peers.Members() {
		if !inConf[m.ID] {
			continue
		}
		if index == 0 && m.State == "alive" || index > 0 && !m.Reported.IsZero() && m.Applied >= index {
			reported++
		}
	}
	return min(max(known, reported), others)
}
