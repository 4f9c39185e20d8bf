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
//
// WAITAOF counts the nodes holding a write durably the same way, from
// the durable index each report carries (durableindex.go). The majority
// counts only when every other voter reported --fsync always: their logs
// hold durably whatever they hold (a leader's deferred sync covers an
// entry before it is answered or reported committed).

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
	// MajorityDurable is Majority when every other voter reported that
	// it runs --fsync always, else 0; Durable holds the durable indexes
	// the others reported.
	MajorityDurable int
	Durable         []uint64
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
	otherVoters := map[string]bool{}
	for _, s := range conf {
		if s.Voter {
			voters++
			selfVoter = selfVoter || s.Current
		}
		if !s.Current {
			r.Others++
			inConf[s.ID] = true
			if s.Voter {
				otherVoters[s.ID] = true
			}
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
			r.Durable = append(r.Durable, m.Durable)
			if m.SyncsAlways {
				delete(otherVoters, m.ID)
			}
		}
	}
	if len(otherVoters) == 0 {
		r.MajorityDurable = r.Majority
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
	return min(max(r.Majority, atLeast(r.Applied, index)), r.Others)
}

// HoldingDurably returns how many nodes of the configuration other than
// this one are known to hold the log up to index durably, an index
// acknowledged as committed; for index 0, the ones gossip reports alive.
func (r Replicas) HoldingDurably(index uint64) int {
	if index == 0 {
		return r.Alive
	}
	return min(max(r.MajorityDurable, atLeast(r.Durable, index)), r.Others)
}

// atLeast counts the indexes of reported that reach index.
func atLeast(reported []uint64, index uint64) int {
	n := 0
	for _, a := range reported {
		if a >= index {
			n++
		}
	}
	return n
}
