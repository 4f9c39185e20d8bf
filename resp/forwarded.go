package resp

import (
	"context"
	"strconv"
	"strings"

	"github.com/goblindb/goblin/command"
	"github.com/goblindb/goblin/node"
	"github.com/goblindb/goblin/raftfsm"
)

// The leader's half of forwarding: internal commands followers send over
// their pooled connections (cluster/forward.go is the other half). Their
// failures are answered with "-CODE text" lines that name node sentinels
// (node.WireError), so the follower can tell "not applied, try the new
// leader" from "may have been applied".

var errNoCluster = command.Errorf("ERR this node does not run in cluster mode")

// cmdGoblinApply proposes a forwarded entry and answers [index, reply]
// once it is applied. Like a client's writes, several entries pipelined
// on one connection are proposed in order without waiting for each other.
func cmdGoblinApply(c *client, argv [][]byte) {
	if c.s.cluster == nil {
		c.drain()
		c.replyError(errNoCluster)
		return
	}
	wait := c.s.cluster.ApplyForwarded(argv[1])
	c.pending = append(c.pending, func() (raftfsm.Result, error) {
		res, err := wait()
		if err != nil {
			return raftfsm.Result{Reply: wireError(err)}, nil
		}
		b := make([]byte, 0, len(res.Reply)+32)
		b = append(b, "*2\r\n:"...)
		b = strconv.AppendUint(b, res.Index, 10)
		b = append(b, "\r\n$"...)
		b = strconv.AppendInt(b, int64(len(res.Reply)), 10)
		b = append(b, "\r\n"...)
		b = append(b, res.Reply...)
		b = append(b, "\r\n"...)
		return raftfsm.Result{Index: res.Index, Reply: b}, nil
	})
}

// cmdGoblinReadIndex answers the leader's confirmed commit index.
func cmdGoblinReadIndex(c *client, argv [][]byte) {
	if c.s.cluster == nil {
		c.replyError(errNoCluster)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	index, err := c.s.cluster.ReadIndex(ctx)
	if err != nil {
		c.send(wireError(err))
		return
	}
	c.reply(func(w *command.Writer) { w.Int(int64(index)) })
}

// cmdGoblinAdmin runs a membership change forwarded by a follower:
// REMOVE <id> or TRANSFER [<id>], on the leader only.
func cmdGoblinAdmin(c *client, argv [][]byte) {
	if c.s.cluster == nil {
		c.replyError(errNoCluster)
		return
	}
	var err error
	switch sub := strings.ToUpper(string(argv[1])); {
	case sub == "REMOVE" && len(argv) == 3:
		err = c.s.cluster.RemoveServerHere(string(argv[2]))
	case sub == "TRANSFER" && len(argv) <= 3:
		id := ""
		if len(argv) == 3 {
			id = string(argv[2])
		}
		err = c.s.cluster.TransferLeadershipHere(id)
	default:
		err = command.ErrSyntax
	}
	if err != nil {
		c.send(wireError(err))
		return
	}
	c.reply(func(w *command.Writer) { w.OK() })
}

// wireError is the error line for err on the internal protocol.
func wireError(err error) []byte {
	line, ok := node.WireError(err)
	if !ok {
		var w command.Writer
		w.Error(err)
		return w.Bytes()
	}
	return []byte("-" + line + "\r\n")
}
