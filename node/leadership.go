package node

import (
	"time"

	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/raftfsm"
)

// watchLeadership reacts to leadership changes. On winning, the leader
// commits a barrier entry of its own term: once it is applied, its commit
// index covers every write acknowledged by any earlier leader, and reads
// may rely on it. It then replicates its packed-layout rules if the state
// holds different ones.
func (n *Node) watchLeadership() {
	defer n.wg.Done()
	for {
		select {
		case <-n.stop:
			return
		case leader := <-n.notify:
			n.group.leadershipChanged()
			if !leader {
				n.readyTerm.Store(0)
				n.log.Info("lost leadership")
				continue
			}
			n.becomeLeader()
		}
	}
}

func (n *Node) becomeLeader() {
	term := n.currentTerm()
	n.log.Info("became leader", "term", term)
	n.updateVoters()
	n.updateGroupGate()
	for attempt := 0; n.IsLeader(); attempt++ {
		f := n.raft.Apply((&raftfsm.Entry{Op: raftfsm.OpNoop}).Encode(nil), 5*time.Second)
		if err := f.Error(); err != nil {
			n.log.Warn("leader barrier failed", "error", err, "attempt", attempt)
			select {
			case <-n.stop:
				return
			case <-time.After(100 * time.Millisecond):
				continue
			}
		}
		break
	}
	if !n.IsLeader() || n.currentTerm() != term {
		return
	}
	// A backup waiting in the data directory is restored before anything
	// is served (restore.go).
	n.restorePending()
	// Rules first: writes wait for readiness, so no key is created under
	// stale rules by this leader.
	n.syncRules()
	n.readyTerm.Store(term)
}

// syncRules proposes this node's packed-layout rules when the replicated
// state has different ones.
func (n *Node) syncRules() {
	ks := n.fsm.KS()
	ks.RLock()
	same := ks.Rules().Equal(n.cfg.Rules)
	ks.RUnlock()
	if same {
		return
	}
	if err := n.raft.Apply(raftfsm.RulesEntry(n.cfg.Rules).Encode(nil), enqueueTimeout).Error(); err != nil {
		n.log.Warn("replicating packed rules failed", "error", err)
		return
	}
	n.log.Info("replicated packed-layout rules", "rules", len(n.cfg.Rules))
}

// updateVoters records whether this node is the only voter.
func (n *Node) updateVoters() {
	f := n.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		n.singleVoter.Store(false)
		return
	}
	voters := 0
	for _, s := range f.Configuration().Servers {
		if s.Suffrage == raft.Voter {
			voters++
		}
	}
	n.singleVoter.Store(voters == 1)
}
