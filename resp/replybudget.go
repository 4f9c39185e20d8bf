package resp

import (
	"math"

	"github.com/goblindb/goblin/node"
)

// The reply budget: what keeps one client's reply from taking the node
// down.
//
// Redis's default puts no limit on a normal client's output buffer, so a
// client may ask for a reply larger than the memory the node has:
// ZRANDMEMBER with a negative count repeats members as often as asked
// (ZRANDMEMBER k -2000000000 is some 30 GB of reply, whatever the size of
// k), and a range over a big set takes a few times the set's own size.
// Built in memory, such a reply would have the node killed for lack of
// it, with every client's connection, and, on a cluster's leader, an
// election. So when no hard limit is set for normal clients, the budget
// stands in for one: an eighth of what is left of three quarters of the
// memory this process may use (the machine's, or the lowest memory limit
// of its cgroups when lower: processmemory.go) once the heap in use is
// counted, but never less than 64 MiB. It is reread every meterPeriod.
// The budget is shared by every client's waiting replies: each client
// takes from it what its replies hold past replyFree, in replyChunk
// steps, as they grow (Writer.Room, asked by Writer.Full) and after each
// command (checkOutput), and gives it back once they are written. So
// several clients asking at once for replies that each fit it cannot
// together take more. A reply's buffer is copied as it grows, and the
// copies it leaves behind are garbage until the next collection, so
// replies of the budget's size have the process hold several times that;
// the eighth keeps it well within the machine (a ZRANDMEMBER cut at 2.2
// GB on a 24 GB machine peaked at 10 GB of resident memory). A reply
// that finds no room stops growing and its client is closed as the hard
// limit closes it, logged as "client closed for overcoming of output
// buffer limits". Where the memory cannot be read (not Linux) there is
// no budget, as in Redis. A hard limit set with client-output-buffer-
// limit acts alone, as configured.

// replyBudgetFloor is the least budget.
const replyBudgetFloor = 64 << 20

// hardOutputLimit is the normal class's hard limit, or, when none is
// set, the reply budget (0: none).
func (s *Server) hardOutputLimit() int64 {
	if h := s.obuf.Load().normal.hard; h > 0 {
		return h
	}
	return s.replyBudget.Load()
}

// refreshReplyBudget rereads the heap in use and sets the budget.
func (s *Server) refreshReplyBudget() {
	total := s.memTotal.Load()
	if total <= 0 {
		return
	}
	s.replyBudget.Store(max((total/4*3-node.UsedMemory())/8, replyBudgetFloor))
}

// replyFree is how much of a client's waiting replies the budget does
// not count: replies this small are what every client holds (a reply
// buffer up to maxKeptReplies is kept between batches).
const replyFree = 1 << 20

// replyChunk is the step in which a client's share of the budget grows.
const replyChunk = 1 << 20

// room is the client's Writer.Room: it takes from the budget what the
// client's waiting replies, n bytes, hold past replyFree, in replyChunk
// steps, and reports false, marking the client overBudget, when the
// budget has not that much left. With a hard limit configured, or no
// budget (the memory unknown), there is always room.
func (c *client) room(n int) (int, bool) {
	budget := c.s.replyBudget.Load()
	if budget <= 0 || c.s.obuf.Load().normal.hard > 0 {
		return math.MaxInt, true
	}
	need := (int64(n) - replyFree - c.replyHeld + replyChunk - 1) / replyChunk * replyChunk
	for need > 0 {
		held := c.s.replyHeld.Load()
		if held+need > budget {
			c.overBudget = true
			return replyFree + int(c.replyHeld), false
		}
		if c.s.replyHeld.CompareAndSwap(held, held+need) {
			c.replyHeld += need
			break
		}
	}
	return replyFree + int(c.replyHeld), true
}

// haveRoom reports whether the client's waiting replies, n bytes, fit
// its share of the budget, taking more if they do not yet (checkOutput:
// the replies of commands that do not ask Writer.Full as they grow).
func (c *client) haveRoom(n int) bool {
	if c.overBudget {
		return false
	}
	if n <= replyFree+int(c.replyHeld) {
		return true
	}
	_, ok := c.room(n)
	return ok
}

// releaseReply gives the client's share back once its replies are
// written or dropped.
func (c *client) releaseReply() {
	if c.replyHeld != 0 {
		c.s.replyHeld.Add(-c.replyHeld)
		c.replyHeld = 0
	}
}
