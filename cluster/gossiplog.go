package cluster

import (
	"bytes"
	"io"
	"net"
	"strconv"
	"sync/atomic"
)

// gossipLog is what memberlist writes its log lines to, on their way to
// the cluster's logger. A node that comes back after it left or stopped
// refutes what its own earlier self said or was last known as: that it
// is dead or suspect (memberlist names the node that said so, here the
// node itself), or alive at its own address with other metadata (a
// restart with new flags). memberlist logs each as a warning at every
// rejoin; those lines are written as information. The same refutations
// of another node's message (others took this node for failed), or of
// an alive message for this node's ID from another address (a second
// node started with the same --id), stay warnings.
//
// Once this node is leaving, memberlist's warnings are information: they
// are about the peers stopping with it (a probe that went unanswered, a
// peer reached over TCP whose UDP socket was already closed) and ask
// nothing of an operator. So are its errors whose cause is a connection
// refused: a peer whose gossip port is closed has stopped (a push/pull
// with a node that stopped a moment before this one). Its other errors
// stay errors.
type gossipLog struct {
	out io.Writer
	// own: the beginnings of the refutations of this node's earlier self.
	own atomic.Pointer[[][]byte]
	id  string
	// leaving reports that this node is on its way out (Cluster.Leave).
	leaving *atomic.Bool
}

func newGossipLog(out io.Writer, id string, leaving *atomic.Bool) *gossipLog {
	g := &gossipLog{out: out, id: id, leaving: leaving}
	g.setAddr("")
	return g
}

// setAddr sets the node's gossip address as others know it ("" until
// memberlist has it).
func (g *gossipLog) setAddr(addr string) {
	own := [][]byte{
		[]byte("[WARN] memberlist: Refuting a dead message (from: " + g.id + ")"),
		[]byte("[WARN] memberlist: Refuting a suspect message (from: " + g.id + ")"),
	}
	if addr != "" {
		own = append(own, []byte("[WARN] memberlist: Refuting an alive message for '"+g.id+"' ("+addr+")"))
	}
	g.own.Store(&own)
}

// memberlistClosed is in memberlist's lines on a send or receive on its
// own socket after this node closed it, as it leaves or stops (at the end
// of the line, or before the peer's address: "... from=10.0.0.2:7946").
var memberlistClosed = []byte(": use of closed network connection")

// memberlistWarn and memberlistErr begin memberlist's warnings and
// errors.
var (
	memberlistWarn = []byte("[WARN] memberlist: ")
	memberlistErr  = []byte("[ERR] memberlist: ")
)

// connRefused ends the error of a dial or a send to a port nothing
// listens on.
var connRefused = []byte(": connection refused")

func (g *gossipLog) Write(p []byte) (int, error) {
	for _, line := range *g.own.Load() {
		if i := bytes.Index(p, line); i >= 0 {
			return g.relevel(p, i, "[INFO]")
		}
	}
	if g.leaving.Load() {
		if i := bytes.Index(p, memberlistWarn); i >= 0 {
			return g.relevel(p, i, "[INFO]")
		}
		if i := bytes.Index(p, memberlistErr); i >= 0 && bytes.Contains(p, connRefused) {
			return g.relevel(p, i, "[INFO]")
		}
	}
	if bytes.Contains(p, memberlistClosed) {
		if i := bytes.Index(p, []byte("] memberlist: ")); i >= 0 {
			if j := bytes.LastIndexByte(p[:i], '['); j >= 0 {
				return g.relevel(p, j, "[DEBUG]")
			}
		}
	}
	return g.out.Write(p)
}

// relevel writes p with the level at p[i:] (memberlist's "[WARN]" or
// "[ERR]" or "[ERROR]") replaced by level.
func (g *gossipLog) relevel(p []byte, i int, level string) (int, error) {
	end := i + bytes.IndexByte(p[i:], ']') + 1
	q := append(append(append([]byte(nil), p[:i]...), level...), p[end:]...)
	if _, err := g.out.Write(q); err != nil {
		return 0, err
	}
	return len(p), nil
}

// hostPort is addr:port as memberlist prints a node's address.
func hostPort(ip net.IP, port uint16) string {
	return ip.String() + ":" + strconv.Itoa(int(port))
}
