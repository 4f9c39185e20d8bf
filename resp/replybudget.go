package resp

import (
	"bufio"
	"bytes"
	"os"
	"strconv"

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
// memory this process may use (the machine's, or its cgroup's limit when
// lower) once the heap in use is counted, but never less than 64 MiB. A
// reply's buffer is copied as it grows, and the copies it leaves behind
// are garbage until the next collection, so a reply of the budget's size
// has the process hold several times that; the eighth keeps it well
// within the machine (a ZRANDMEMBER cut at 2.2 GB on a 24 GB machine
// peaked at 10 GB of resident memory). It is reread every
// meterPeriod. A reply that reaches it stops growing (Writer.Full) and
// the client is closed as the hard limit closes it, logged as "client
// closed for overcoming of output buffer limits". Where the memory cannot
// be read (not Linux) there is no budget, as in Redis. A hard limit set
// with client-output-buffer-limit acts alone, as configured.

// replyBudgetFloor is the least the budget allows one reply.
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

// processMemory returns the memory this process may use: the smaller of
// the machine's (MemTotal) and its cgroup's limit (cgroup v2's
// memory.max, v1's memory.limit_in_bytes); 0 when neither is known.
func processMemory() int64 {
	total := int64(0)
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if f := bytes.Fields(sc.Bytes()); len(f) >= 2 && string(f[0]) == "MemTotal:" {
				if kb, err := strconv.ParseInt(string(f[1]), 10, 64); err == nil {
					total = kb << 10
				}
			}
		}
	}
	for _, name := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		// "max" (v2) or a huge number (v1) is no limit.
		if n, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64); err == nil && n > 0 && (total == 0 || n < total) {
			total = n
		}
	}
	return total
}
