package node

import (
	"time"

	"github.com/goblindb/goblin/keyspace"
	"github.com/goblindb/goblin/raftfsm"
)

// expireEvery is how often the leader looks for expired keys, and
// expireBatch how many it deletes per entry.
const (
	expireEvery = 100 * time.Millisecond
	expireBatch = 256
)

// expireLoop makes the leader turn expired keys into log entries, so every
// node deletes them at the same point of the log. Readers never see an
// expired key meanwhile: reads treat it as absent by the clock.
func (n *Node) expireLoop() {
	defer n.wg.Done()
	t := time.NewTicker(expireEvery)
	defer t.Stop()
	for {
		select {
		case <-n.stop:
			return
		case <-t.C:
		}
		if !n.Ready() {
			continue
		}
		for {
			e := n.collectExpired()
			if e == nil {
				break
			}
			if _, err := n.Apply(e); err != nil {
				n.log.Warn("proposing expired keys failed", "error", err)
				break
			}
			if len(e.Expired) < expireBatch {
				break
			}
		}
	}
}

func (n *Node) collectExpired() *raftfsm.Entry {
	now := n.Now()
	var out []raftfsm.ExpiredKey
	ks := n.fsm.KS()
	ks.RLock()
	for db := 0; db < keyspace.NumDBs && len(out) < expireBatch; db++ {
		for _, k := range ks.DB(db).ExpiredBefore(now, expireBatch-len(out)) {
			out = append(out, raftfsm.ExpiredKey{DB: db, Key: []byte(k.Key), At: k.At})
		}
	}
	ks.RUnlock()
	if len(out) == 0 {
		return nil
	}
	return &raftfsm.Entry{Op: raftfsm.OpExpire, Time: now, Expired: out}
}
