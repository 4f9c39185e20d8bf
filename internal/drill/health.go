package drill

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// view is the cluster as the drill's nodes describe it at one moment.
type view struct {
	infos  map[string]*nodeInfo // by node ID; nodes that did not answer are absent
	errs   map[string]error
	leader string // the leader every answering node names, if they agree
}

// look queries every node at once.
func (d *Drill) look() view {
	v := view{infos: map[string]*nodeInfo{}, errs: map[string]error{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, n := range d.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			info, err := query(n.Addr, d.dialOpts)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				v.errs[n.ID] = err
				return
			}
			v.infos[n.ID] = info
		}()
	}
	wg.Wait()
	named := map[string]bool{}
	leader := ""
	for id, info := range v.infos {
		named[info.leader] = true
		if info.role == "master" {
			leader = id
		}
	}
	if leader != "" && len(named) == 1 && named[leader] {
		v.leader = leader
	}
	return v
}

// healthy says why the view is not a healthy cluster ("" when it is):
// every node answers, all name the same leader, and the leader's
// configuration has every node as a voter.
func (v view) healthy(nodes []*node) string {
	for _, n := range nodes {
		if err := v.errs[n.ID]; err != nil {
			return fmt.Sprintf("%s does not answer: %v", n.ID, err)
		}
	}
	if v.leader == "" {
		named := map[string]string{}
		for id, info := range v.infos {
			named[id] = info.leader
		}
		return fmt.Sprintf("no agreed leader (each node's leader: %v)", named)
	}
	voters := map[string]bool{}
	for _, m := range v.infos[v.leader].nodes {
		if m["suffrage"] == "voter" {
			voters[m["id"]] = true
		}
	}
	for _, n := range nodes {
		if !voters[n.ID] {
			return fmt.Sprintf("%s is not a voter in the leader's configuration", n.ID)
		}
	}
	return ""
}

// waitHealthy polls until the cluster is healthy, for at most d.
func (d *Drill) waitHealthy(ctx context.Context, dur time.Duration) (view, error) {
	deadline := time.Now().Add(dur)
	for {
		v := d.look()
		why := v.healthy(d.nodes)
		if why == "" {
			return v, nil
		}
		if time.Now().After(deadline) {
			return v, fmt.Errorf("cluster not healthy after %v: %s", dur, why)
		}
		select {
		case <-ctx.Done():
			return v, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitLeader polls until the answering nodes agree on a leader, for at
// most dur, and returns its ID.
func (d *Drill) waitLeader(ctx context.Context, dur time.Duration) (string, error) {
	deadline := time.Now().Add(dur)
	for {
		v := d.look()
		if v.leader != "" {
			return v.leader, nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("no agreed leader within %v", dur)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
