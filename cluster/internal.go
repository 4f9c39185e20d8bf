package cluster

import (
	"bufio"
	"context"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/redcon"

	"github.com/goblindb/goblin/node"
	"github.com/goblindb/goblin/raftfsm"
)

// The internal server answers the requests peers send over the plane's
// internal connections (forward.go is the other side). Requests are RESP
// arrays, read with redcon's reader, and each connection's replies go back
// in the order of its requests. Entries are proposed as they are read,
// without waiting for earlier ones to commit, those of one read as one
// batch, so a follower's pipeline is replicated in one round and applied
// in the order sent; a writer goroutine waits for each result in turn and
// writes it.
//
// Nothing here is reachable from the client port: the connection got
// here through the plane's handshake, so the peer holds the cluster's
// credentials (or, without any, is on loopback).

// The internal requests.
const (
	cmdApply     = "GOBLIN.APPLY"     // <entry> → [index, reply]
	cmdReadIndex = "GOBLIN.READINDEX" // → index
	cmdAdmin     = "GOBLIN.ADMIN"     // REMOVE <id> | TRANSFER [<id>] → OK
	cmdID        = "GOBLIN.ID"        // → the node's ID
	cmdFollows   = "GOBLIN.FOLLOWS"   // <leader ID> <term> → age of the last contact, ns
)

// internalTimeout bounds how long a read index or a membership change
// waits on the leader.
const internalTimeout = 5 * time.Second

// maxInFlight bounds the requests of one connection read but not yet
// answered: past it, reading waits for the writer.
const maxInFlight = 4096

// serveInternal serves one internal connection until it closes.
//
// A read index the leader knows without a round (its lease holds) is
// answered by the reading goroutine itself when no earlier reply waits:
// a follower's linearizable reads wait for this answer, and handing it to
// the writer goroutine would cost a goroutine wake-up on each side of
// every round.
func (c *Cluster) serveInternal(nc net.Conn) {
	out := &replyWriter{nc: nc, bw: bufio.NewWriterSize(nc, 32<<10)}
	replies := make(chan reply, maxInFlight)
	done := make(chan struct{})
	go func() {
		defer close(done)
		out.drain(replies)
	}()
	rd := redcon.NewReader(nc)
	var scratch []byte
	for {
		cmds, err := rd.ReadCommands()
		if err != nil {
			break
		}
		wrote := false
		// The entries of one read go to Raft as one batch: proposed one
		// by one, the first would go alone and the others wait for its
		// fdatasync.
		c.node.ProposeTogether(func() {
			for _, cmd := range cmds {
				if out.pending.Load() == 0 {
					if b, ok := c.answerNow(scratch[:0], cmd.Args); ok {
						scratch = b
						out.write(b, false)
						wrote = true
						continue
					}
				}
				out.pending.Add(1)
				replies <- c.internalRequest(cmd.Args)
			}
		})
		if wrote {
			out.flushIfIdle()
		}
	}
	close(replies)
	<-done
	nc.Close()
}

// answerNow is the reply to a request that needs no wait: a read index
// the leader's lease (or being the only voter) confirms, or a leader's
// confirmation round.
func (c *Cluster) answerNow(b []byte, args [][]byte) ([]byte, bool) {
	if len(args) == 3 && strings.EqualFold(string(args[0]), cmdFollows) {
		return append(b, followsReply(c.node, args[1], args[2])...), true
	}
	if len(args) != 1 || !strings.EqualFold(string(args[0]), cmdReadIndex) {
		return nil, false
	}
	index, ok := c.node.ReadIndexNow()
	if !ok {
		return nil, false
	}
	b = append(b, ':')
	b = strconv.AppendUint(b, index, 10)
	return append(b, "\r\n"...), true
}

// replyWriter writes one internal connection's replies in the order of
// their requests: the writer goroutine's, and the reading goroutine's
// answers while nothing is pending. After a write fails it drops what
// follows (the connection is closed, and the reader stops too).
type replyWriter struct {
	nc net.Conn
	// pending counts the replies handed to the writer goroutine and not
	// yet written.
	pending atomic.Int64

	mu  sync.Mutex
	bw  *bufio.Writer
	err error
}

func (w *replyWriter) write(b []byte, flush bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return
	}
	_, w.err = w.bw.Write(b)
	if w.err == nil && flush {
		w.err = w.bw.Flush()
	}
	if w.err != nil {
		w.nc.Close()
	}
}

// flushIfIdle sends what is buffered unless the writer goroutine has
// replies to write (it flushes once it has none).
func (w *replyWriter) flushIfIdle() {
	if w.pending.Load() == 0 {
		w.write(nil, true)
	}
}

// reply is one request's answer in the making.
type reply struct {
	// answer produces it, waiting if it must.
	answer func() []byte
	// ready reports whether answer would return at once; nil: it may
	// wait.
	ready func() bool
}

// readyNow is a reply known as the request is read.
func readyNow(b []byte) reply {
	return reply{answer: func() []byte { return b }, ready: func() bool { return true }}
}

// drain writes each reply handed over, flushing whenever no other one is
// queued, and before waiting for one: the replies of a batch of entries
// just applied go out while the entries queued behind them, in the next
// batch, wait for their commit round. It still drains after a write
// failed, so the reader never blocks on a full channel.
func (w *replyWriter) drain(replies <-chan reply) {
	for r := range replies {
		if r.ready == nil || !r.ready() {
			w.write(nil, true)
		}
		w.write(r.answer(), len(replies) == 0)
		w.pending.Add(-1)
	}
}

// internalRequest starts one request and returns its reply. An entry is
// proposed here, on the reading goroutine, so entries enter the log in
// the order they arrived.
func (c *Cluster) internalRequest(args [][]byte) reply {
	if len(args) == 0 {
		return readyNow(errReply("ERR empty request"))
	}
	switch name := strings.ToUpper(string(args[0])); {
	case name == cmdApply && len(args) == 2:
		wait, answered := c.node.ApplyForwarded(args[1])
		return reply{answer: func() []byte { return applyReply(wait()) }, ready: answered}
	case name == cmdReadIndex && len(args) == 1:
		return reply{answer: func() []byte {
			ctx, cancel := context.WithTimeout(context.Background(), internalTimeout)
			defer cancel()
			index, err := c.node.ReadIndex(ctx)
			if err != nil {
				return wireError(err)
			}
			return []byte(":" + strconv.FormatUint(index, 10) + "\r\n")
		}}
	case name == cmdAdmin && len(args) >= 2:
		sub := strings.ToUpper(string(args[1]))
		var id string
		if len(args) == 3 {
			id = string(args[2])
		}
		return reply{answer: func() []byte {
			var err error
			switch {
			case sub == "REMOVE" && len(args) == 3 && c.leaving.Load():
				// This leader is stopping too: a node leaving now may be
				// one of several stopped together, which keep the
				// configuration whole (Leave); it asks again, and
				// decides again, meanwhile.
				return errReply("TRYAGAIN the leader is leaving the cluster")
			case sub == "REMOVE" && len(args) == 3:
				err = c.node.RemoveServerHere(id)
			case sub == "TRANSFER" && len(args) <= 3:
				err = c.node.TransferLeadershipHere(id)
			default:
				return errReply("ERR syntax error")
			}
			if err != nil {
				return wireError(err)
			}
			return []byte("+OK\r\n")
		}}
	case name == cmdFollows && len(args) == 3:
		return readyNow(followsReply(c.node, args[1], args[2]))
	case name == cmdID && len(args) == 1:
		return readyNow(bulk(c.cfg.ID))
	}
	return readyNow(errReply("ERR unknown internal request '" + sanitize(args[0]) + "'"))
}

// followsReply is GOBLIN.FOLLOWS's reply, taken as the request is read:
// the age in nanoseconds of this node's last contact with the leader it
// follows in term, or NOTFOLLOWING.
func followsReply(n Node, leader, term []byte) []byte {
	t, err := strconv.ParseUint(string(term), 10, 64)
	if err != nil {
		return errReply("ERR bad term")
	}
	age, err := n.FollowsHere(string(leader), t)
	if err != nil {
		return wireError(err)
	}
	return []byte(":" + strconv.FormatInt(int64(age), 10) + "\r\n")
}

// applyReply is GOBLIN.APPLY's reply: [index, reply bytes], or the error.
func applyReply(res raftfsm.Result, err error) []byte {
	if err != nil {
		return wireError(err)
	}
	b := make([]byte, 0, len(res.Reply)+32)
	b = append(b, "*2\r\n:"...)
	b = strconv.AppendUint(b, res.Index, 10)
	b = append(b, "\r\n$"...)
	b = strconv.AppendInt(b, int64(len(res.Reply)), 10)
	b = append(b, "\r\n"...)
	b = append(b, res.Reply...)
	return append(b, "\r\n"...)
}

// wireError is the error line for err: "-CODE text" naming a node
// sentinel (node.WireError) where there is one, so the follower knows
// whether the request may have taken effect.
func wireError(err error) []byte {
	if line, ok := node.WireError(err); ok {
		return []byte("-" + line + "\r\n")
	}
	return []byte("-ERR " + oneLine(err.Error()) + "\r\n")
}

func errReply(msg string) []byte {
	return []byte("-" + msg + "\r\n")
}

func bulk(s string) []byte {
	return []byte("$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n")
}

// oneLine keeps an error text on one line.
func oneLine(s string) string {
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
}

// sanitize quotes a peer's bytes for an error text: printable ASCII only,
// at most 64 bytes.
func sanitize(b []byte) string {
	if len(b) > 64 {
		b = b[:64]
	}
	out := make([]byte, 0, len(b))
	for _, ch := range b {
		if ch < ' ' || ch > '~' {
			ch = '?'
		}
		out = append(out, ch)
	}
	return string(out)
}
