package node

// Replicas holding a write, for WAIT.
//
// Redis's WAIT counts the replicas that acknowledged a connection's
// writes. A write Goblin acknowledged is committed: a majority of the
// voters hold it in their logs (durably under --fsync always), so at least
// that many nodes other than this one hold it, with no round trip to ask.
// The other nodes' progress reports (each node sends one to every other
// every half second) tell which of them have applied it, and so hold it,
// beyond that majority: on the leader as on a follower.
// The count is what is known, never more than what holds the write.

// Replicas is what this node knows of the other nodes' logs at one
// moment: Holding counts from it, for any number of indexes.
type Replicas struct {
	// Majority is how many other nodes hold every committed entry: the
	// voters' majority, less this node when it votes.
	Majority int
	// Others counts the configuration's other nodes, Alive those gossip
	// reports alive; Applied holds the indexes the others reported.
	Others, Alive int
	Applied       []uint64
}

// Replicas returns what this node knows of the other nodes' logs now. A
// single node has no others.
func (n *Node) Replicas() Replicas {
	var r Replicas
	if n.peers == nil {
		return r
	}
	conf, err := n.Configuration()
	if err != nil {
		return r
	}
	inConf := make(map[string]bool, len(conf))
	voters, selfVoter := 0, false
	for _, s := range conf {
		if s.Voter {
			voters++
			selfVoter = selfVoter || s.Current
		}
		if !s.Current {
			r.Others++
			inConf[s.ID] = true
		}
	}
	// A majority of the voters hold every committed entry (the current
	// configuration's too, and so, by Raft's log matching, everything
	// before it); this node may be one of them.
	r.Majority = voters/2 + 1
	if selfVoter {
		r.Majority--
	}
	for _, m := range n.peers.Members() {
		if !inConf[m.ID] {
			continue
		}
		if m.State == "alive" {
			r.Alive++
		}
		if !m.Reported.IsZero() {
			r.Applied = append(r.Applied, m.Applied)
		}
	}
	return r
}

// Holding returns how many nodes of the configuration other than this
// one are known to hold the log up to index, an index acknowledged as
// committed (a write's Result.Index); for index 0 (no write), the ones
// gossip reports alive.
func (r Replicas) Holding(index uint64) int {
	if index == 0 {
		return r.Alive
	}
	reported := 0
	for _, a := range r.Applied {
		if a >= index {
			reported++
		}
	}
	return min(max(r.Majority, reported), r.Others)
}
