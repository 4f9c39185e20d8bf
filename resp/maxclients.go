package resp

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// maxclients: how many client connections the node holds at once.
//
// Every connection counts from the moment it is accepted, on any port
// (TCP, TLS, Unix socket), until it closes, including a TLS connection
// still in its handshake, as Redis counts a client from its accept. One
// past the limit is answered "-ERR max number of clients reached" and
// closed (a TLS one is closed without a word: there is no session to
// write in yet), and counted in INFO's rejected_connections.
//
// Each connection is a file descriptor, and so are the node's own files
// and sockets: the log, the stable store, snapshots, its listeners, and
// the connections to and from its peers. maxclients is therefore kept
// within the process's open-files limit minus a reserve for those, so
// that clients can never take the descriptors the log and the peers need:
// at start, and when CONFIG SET raises maxclients, the limit is raised
// as far as the system allows, and where it cannot hold maxclients plus
// the reserve, maxclients is lowered to what fits (at start, with a
// warning) or the CONFIG SET is refused, naming the number that fits, as
// Redis does.

// defaultMaxClients is Redis's maxclients default.
const defaultMaxClients = 10000

// fdReserve is how many descriptors maxclients leaves to the node itself.
// Redis reserves 32 for its files and listeners, and counts its cluster
// links as clients; a Goblin node's peers have their own plane, so the
// reserve covers them too:
//
//   - the process: 3 standard streams, the runtime's poller (2), the
//     data directory lock;
//   - listeners: RESP, TLS, Unix socket, node-to-node, gossip TCP and
//     UDP, pprof (7);
//   - storage: the log's open segment and its directory, the stable
//     store, a snapshot being written and one being read with their
//     directory (about 8);
//   - transient files: TLS certificate reloads, /proc reads (about 6);
//   - per peer: Raft's pooled connections each way (up to 8 kept, plus
//     the replication pipeline and heartbeats: about 10 each way),
//     forwarding (3 each way) and gossip's push-pull streams (2), so
//     about 28; a five-voter cluster has 4 peers.
//
// That is about 27 + 4×28 = 139 at worst; 256 leaves room for
// non-voters beyond the fifth node and for bursts. (Measured: the leader
// of a 3-node cluster taking writes forwarded from 100 clients of its
// followers held 24 descriptors.)
const fdReserve = 256

// errMaxClients is what a connection past maxclients reads before it is
// closed.
var errMaxClients = []byte("-ERR max number of clients reached\r\n")

// clientLimit counts the open client connections against maxclients.
type clientLimit struct {
	mu  sync.Mutex   // serializes changes (they may raise the open-files limit)
	n   atomic.Int64 // connections open
	cap atomic.Int64 // maxclients in effect
}

// admit counts a new connection, or refuses it when maxclients are
// open: it is then answered (unless it is TLS) and redcon closes it. An
// admitted connection is uncounted when it closes.
func (s *Server) admit(fc *framedConn) bool {
	if s.limit.n.Add(1) > s.limit.cap.Load() {
		s.limit.n.Add(-1)
		s.stats.rejectedConns.Add(1)
		if fc.tls == nil {
			// A new socket's send buffer is empty: this does not block,
			// but a deadline makes sure.
			fc.raw.SetWriteDeadline(time.Now().Add(time.Second))
			fc.raw.Write(errMaxClients)
		}
		return false
	}
	fc.onClose = func() { s.limit.n.Add(-1) }
	return true
}

// MaxClients returns maxclients in effect.
func (s *Server) MaxClients() int64 { return s.limit.cap.Load() }

// initMaxClients sets maxclients at start: it raises the open-files limit
// for want clients, or lowers maxclients to what the limit holds, with a
// warning. It fails when not even one client fits.
func (s *Server) initMaxClients(want int64) error {
	if want <= 0 {
		want = defaultMaxClients
	}
	s.limit.mu.Lock()
	defer s.limit.mu.Unlock()
	fit, lim, err := fitFileLimit(want)
	if err != nil {
		s.log().Warn("the open files limit is unknown; maxclients assumes 1024 descriptors", "error", err)
		lim = 1024
		fit = min(want, lim-fdReserve)
	}
	if fit < 1 {
		return fmt.Errorf("the open files limit (ulimit -n) of %d is not enough: goblind keeps %d descriptors for itself; raise it to at least %d", lim, fdReserve, want+fdReserve)
	}
	if fit < want {
		s.log().Warn("maxclients lowered to fit the open files limit; raise ulimit -n for more",
			"requested", want, "maxclients", fit, "open_files_limit", lim, "reserved", fdReserve)
	}
	s.limit.cap.Store(fit)
	return nil
}

// setMaxClients is CONFIG SET maxclients: lowering always works (clients
// already connected stay), raising needs the open-files limit to hold
// the new value and the reserve.
func (s *Server) setMaxClients(want int64) error {
	s.limit.mu.Lock()
	defer s.limit.mu.Unlock()
	if want > s.limit.cap.Load() {
		fit, _, err := fitFileLimit(want)
		if err != nil {
			return err
		}
		if fit < want {
			return fmt.Errorf("The operating system is not able to handle the specified number of clients, try with %d", max(fit, 1))
		}
	}
	s.limit.cap.Store(want)
	return nil
}

// fitFileLimit raises the open-files limit, as far as the system allows,
// to hold want clients and the reserve, and returns how many clients the
// limit holds (at most want) and the limit.
func fitFileLimit(want int64) (fit, limit int64, err error) {
	need := uint64(want) + fdReserve
	got, err := raiseFileLimit(need)
	if err != nil {
		return 0, 0, err
	}
	if got >= need {
		return want, int64(min(got, 1<<62)), nil
	}
	return int64(got) - fdReserve, int64(got), nil
}
