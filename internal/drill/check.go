package drill

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/anishathalye/porcupine"
)

// Witness is the verdict on the witness set: every member whose ZADD was
// acknowledged must be on every node; none whose ZADD was refused with a
// "not applied" error may be on any.
type Witness struct {
	Acked   int `json:"acked"`
	Failed  int `json:"failed"`
	Unknown int `json:"unknown"`
	// Lost: acknowledged members missing, per node (first 20 listed).
	LostCount int                 `json:"lost"`
	Lost      map[string][]string `json:"lost_members,omitempty"`
	// Phantom: members refused with a "not applied" error but present.
	PhantomCount int      `json:"phantom"`
	Phantom      []string `json:"phantom_members,omitempty"`
	// Unread: nodes whose witness set could not be read.
	Unread map[string]string `json:"unread,omitempty"`
	// Large counts the witness writes that also added a pad (written in
	// pieces); Torn the most, on any node, whose witness and pad were not
	// both present or both absent (TornNodes: where).
	Large     int      `json:"large,omitempty"`
	Torn      int      `json:"torn"`
	TornNodes []string `json:"torn_nodes,omitempty"`
}

// finalRead reads key on n with a linearizable read, retrying for up
// to 30 s while the node cannot answer.
func (d *Drill) finalRead(n *node, key string) ([]reply, error) {
	r, err := d.finalDo(n, "ZRANGE", key, "0", "-1", "WITHSCORES")
	return r.Array, err
}

// finalDo runs a read on n, retrying for up to 30 s while the node
// cannot answer.
func (d *Drill) finalDo(n *node, args ...string) (reply, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := dial(n.Addr, d.dialOpts)
		if err == nil {
			var r reply
			r, err = c.do(15*time.Second, args...)
			c.close()
			if err == nil {
				return r, nil
			}
		}
		if time.Now().After(deadline) {
			return reply{}, err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// checkWitness reads the witness set back on every node.
func (d *Drill) checkWitness(ops []Op) Witness {
	w := Witness{Lost: map[string][]string{}, Unread: map[string]string{}}
	acked, failed, large := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, op := range ops {
		if op.Kind != KindWitness {
			continue
		}
		if op.Large {
			large[op.Witness] = true
		}
		switch op.Outcome {
		case OK:
			acked[op.Witness] = true
		case Failed:
			failed[op.Witness] = true
		default:
			w.Unknown++
		}
	}
	w.Acked, w.Failed, w.Large = len(acked), len(failed), len(large)
	phantom := map[string]bool{}
	for _, n := range d.nodes {
		// The witnesses (scores from 0), not the pads (scored -1).
		r, err := d.finalDo(n, "ZRANGEBYSCORE", d.keyName(-1), "0", "+inf", "WITHSCORES")
		arr := r.Array
		if err != nil {
			w.Unread[n.ID] = err.Error()
			continue
		}
		have := map[string]bool{}
		for i := 0; i < len(arr); i += 2 {
			have[string(arr[i].Str)] = true
			if failed[string(arr[i].Str)] {
				phantom[string(arr[i].Str)] = true
			}
		}
		if len(large) > 0 {
			torn, err := d.tornLarge(n, large, have)
			if err != nil {
				w.Unread[n.ID] = err.Error()
				continue
			}
			if torn > 0 {
				w.TornNodes = append(w.TornNodes, n.ID)
			}
			w.Torn = max(w.Torn, torn)
		}
		var lost []string
		for m := range acked {
			if !have[m] {
				lost = append(lost, m)
			}
		}
		sort.Strings(lost)
		w.LostCount = max(w.LostCount, len(lost))
		if len(lost) > 0 {
			w.Lost[n.ID] = lost[:min(len(lost), 20)]
		}
	}
	w.PhantomCount = len(phantom)
	for m := range phantom {
		w.Phantom = append(w.Phantom, m)
	}
	sort.Strings(w.Phantom)
	w.Phantom = w.Phantom[:min(len(w.Phantom), 20)]
	return w
}

// tornLarge counts on n the large witness writes whose witness and pad
// are not both present or both absent.
func (d *Drill) tornLarge(n *node, large, have map[string]bool) (int, error) {
	pads := 0
	torn := 0
	for wit := range large {
		r, err := d.finalDo(n, "ZSCORE", d.keyName(-1), padName(wit, d.cfg.LargeBytes))
		if err != nil {
			return 0, err
		}
		if !r.Null {
			pads++
		}
		if r.Null == have[wit] {
			torn++
		}
	}
	// No pad of a write the history does not know of.
	r, err := d.finalDo(n, "ZCOUNT", d.keyName(-1), "-1", "-1")
	if err != nil {
		return 0, err
	}
	return torn + int(r.Num) - pads, nil
}

// finalReads reads every workload key on every node once the workload
// has stopped; each read joins the history (as a client of its own per
// node), so the checker also sees the state every replica ended in.
func (d *Drill) finalReads() (ops []Op, errs map[string]string) {
	errs = map[string]string{}
	for i, n := range d.nodes {
		for k := 0; k < d.cfg.Keys; k++ {
			op := Op{Client: d.cfg.Clients + i, Node: n.ID, Kind: KindZRange, Key: k, Invoke: d.since()}
			arr, err := d.finalRead(n, d.keyName(k))
			op.Return = d.since()
			if err != nil {
				errs[n.ID] = err.Error()
				continue
			}
			if err := op.parse(reply{Kind: '*', Array: arr}); err != nil {
				errs[n.ID] = err.Error()
				continue
			}
			ops = append(ops, op)
		}
	}
	return ops, errs
}

// KeyVerdict is the linearizability verdict on one workload key.
type KeyVerdict struct {
	Key    string `json:"key"`
	Ops    int    `json:"ops"`
	Result string `json:"result"` // "ok", "illegal" or "unknown" (the check timed out)
}

// Linearizability is the verdict on the whole history.
type Linearizability struct {
	Result string       `json:"result"` // "ok", "illegal", "unknown"
	Keys   []KeyVerdict `json:"keys"`
	HTML   string       `json:"html,omitempty"` // the visualisation of the violation
	Took   string       `json:"took"`
}

// checkLinearizable checks each key's history with porcupine and, when a
// key's is not linearizable, writes porcupine's visualisation of it with
// the faults' windows annotated.
func (d *Drill) checkLinearizable(ops []Op, faults []*Fault) Linearizability {
	t0 := time.Now()
	all := porcupineOps(ops)
	byKey := map[int][]porcupine.Operation{}
	for _, op := range all {
		k := op.Metadata.(int)
		byKey[k] = append(byKey[k], op)
	}
	res := Linearizability{Result: "ok"}
	var illegal []porcupine.Operation // the first key found illegal
	deadline := time.Now().Add(d.cfg.CheckTime)
	for k := 0; k < d.cfg.Keys; k++ {
		h := byKey[k]
		v := KeyVerdict{Key: d.keyName(k), Ops: len(h), Result: "ok"}
		switch porcupine.CheckOperationsTimeout(zsetModel, h, max(time.Until(deadline), time.Second)) {
		case porcupine.Illegal:
			v.Result = "illegal"
			if illegal == nil {
				illegal = h
			}
		case porcupine.Unknown:
			v.Result = "unknown"
		}
		if v.Result != "ok" && res.Result != "illegal" {
			res.Result = v.Result
		}
		res.Keys = append(res.Keys, v)
	}
	// The visualisation needs a second, slower pass that records partial
	// linearizations: over one illegal key, within what is left of the
	// budget.
	if illegal != nil && time.Until(deadline) > time.Second {
		_, info := porcupine.CheckOperationsVerbose(zsetModel, illegal, time.Until(deadline))
		var notes []porcupine.Annotation
		for _, f := range faults {
			notes = append(notes, porcupine.Annotation{
				Tag: "faults", Start: f.start, End: f.heal,
				Description:     fmt.Sprintf("%d %s %v", f.N, f.Kind, f.Targets),
				Details:         "fault " + strconv.Itoa(f.N) + ": " + f.Kind + " " + fmt.Sprint(f.Targets) + detail(f.Detail),
				BackgroundColor: "#f4c7c3",
			})
		}
		info.AddAnnotations(notes)
		path := filepath.Join(d.cfg.Out, "linearizability.html")
		if err := porcupine.VisualizePath(zsetModel, info, path); err == nil {
			res.HTML = path
		}
	}
	res.Took = time.Since(t0).Round(time.Millisecond).String()
	return res
}

// analyseContext bounds the checks after the run.
func analyseContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 2*time.Minute)
}
