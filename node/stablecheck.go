package node

import (
	"fmt"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// checkStableState refuses a data directory whose log or snapshots show
// Raft ran here but whose stable store holds no term, or a term older
// than the newest term in the log and snapshots (which a node's term
// never is): raft-stable.db was deleted, emptied or damaged. Raft would
// start again from that term with no vote recorded, so the node could
// vote a second time in a term it already voted in, and two leaders could
// be elected in one term.
//
// A node that is the only voter of its last configuration has nobody to
// disagree with: its term is set again from its log (the last entry's
// term, or the newest snapshot's), with a warning, and it starts.
func checkStableState(st *stores, snaps *snapshotStore, id string, logger hclog.Logger) error {
	problem := "holds no term"
	if term, err := st.stable.GetUint64(keyCurrentTerm); err == nil && term > 0 {
		newest, err := newestTerm(st, snaps)
		if err != nil {
			return err
		}
		if term >= newest {
			return nil
		}
		problem = fmt.Sprintf("holds term %d, older than the newest term of the log and snapshots (%d)", term, newest)
	}
	conf, last, lastTerm, err := lastConfiguration(st, snaps)
	if err != nil {
		return err
	}
	if last == 0 && lastTerm == 0 && len(conf.Servers) == 0 {
		return nil // a new node
	}
	var voters []raft.ServerID
	for _, s := range conf.Servers {
		if s.Suffrage == raft.Voter {
			voters = append(voters, s.ID)
		}
	}
	if len(voters) == 1 && voters[0] == raft.ServerID(id) && lastTerm > 0 {
		if err := st.stable.SetUint64(keyCurrentTerm, lastTerm); err != nil {
			return fmt.Errorf("node: writing the term back to the stable store: %w", err)
		}
		logger.Warn("the stable store (raft-stable.db) "+problem+"; this node is its configuration's only voter, so its term was set again from its log", "term", lastTerm)
		return nil
	}
	return fmt.Errorf("node: the stable store (raft-stable.db) %s, but the log and snapshots show this node ran Raft (last index %d, term %d): "+
		"raft-stable.db is missing or damaged, and without its term and vote the node could vote twice in one term. "+
		"Move the data directory aside and start the node again with an empty one: it catches up from the leader", problem, last, lastTerm)
}

// newestTerm is the term of the log's last entry, or of the newest
// snapshot when the log holds none past it (terms never decrease along
// the log).
func newestTerm(st *stores, snaps *snapshotStore) (uint64, error) {
	var term uint64
	metas, err := snaps.FileSnapshotStore.List()
	if err != nil {
		return 0, err
	}
	if len(metas) > 0 {
		term = metas[0].Term
	}
	log := st.logStore()
	last, err := log.LastIndex()
	if err != nil || last == 0 {
		return term, err
	}
	var e raft.Log
	if err := log.GetLog(last, &e); err != nil {
		return 0, fmt.Errorf("node: reading log entry %d: %w", last, err)
	}
	return max(term, e.Term), nil
}

// lastConfiguration reads the last Raft configuration of a data
// directory, as raft does at start: the newest snapshot's, then the log's
// configuration entries after it. last and lastTerm are the log's last
// index and the newest term seen; all zero for a new node.
func lastConfiguration(st *stores, snaps *snapshotStore) (conf raft.Configuration, last, lastTerm uint64, err error) {
	log := st.logStore()
	if last, err = log.LastIndex(); err != nil {
		return conf, 0, 0, err
	}
	metas, err := snaps.FileSnapshotStore.List()
	if err != nil {
		return conf, 0, 0, err
	}
	var from uint64
	if len(metas) > 0 {
		conf, lastTerm, from = metas[0].Configuration, metas[0].Term, metas[0].Index+1
	}
	if first, err := log.FirstIndex(); err == nil && first > from {
		from = first
	}
	for i := from; i <= last && last > 0; i++ {
		var e raft.Log
		if err := log.GetLog(i, &e); err != nil {
			return conf, 0, 0, fmt.Errorf("node: reading log entry %d: %w", i, err)
		}
		lastTerm = max(lastTerm, e.Term)
		if e.Type == raft.LogConfiguration {
			conf = raft.DecodeConfiguration(e.Data)
		}
	}
	return conf, last, lastTerm, nil
}
