package resp

import (
	"errors"
	"net"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/redcon"
)

// Config configures the RESP edge.
type Config struct {
	Addr       string // TCP listen address
	UnixSocket string // optional Unix socket path
	// RequirePass, when set, makes clients AUTH before other commands.
	RequirePass string
	// Double70 writes doubles as Redis 7.0 did ("%.17g") instead of 7.2's
	// shortest form; for comparing against a 7.0 server byte for byte.
	Double70 bool
	// Version is what HELLO and INFO report as the server version.
	Version string
	// RunID identifies this process in INFO.
	RunID string
	// Settings are extra CONFIG GET parameters (name → value).
	Settings map[string]string
	// OperatorACL is the node's configuration of users (--aclfile); nil:
	// the default user with RequirePass. ACL is where the replicated users
	// are; nil: the backend's state machine, if it has one. NodeID names
	// the node in the replicated state (default: the backend's ID).
	OperatorACL *OperatorACL
	ACL         ACLSource
	NodeID      string
}

// Server serves RESP for one node.
type Server struct {
	cfg     Config
	backend Backend
	cluster ClusterBackend // nil if the backend has no cluster support
	started time.Time

	mu        sync.Mutex
	listeners []net.Listener
	gates     []*gateListener
	active    atomic.Int64 // batches being executed
	servers   []*redcon.Server
	clients   map[int64]*client
	nextID    atomic.Int64
	wg        sync.WaitGroup
	closed    bool
	closing   chan struct{} // closed when Close starts: blocked clients leave

	blocked  blockRegistry
	settings settings
	pass     atomic.Pointer[string] // requirepass, which CONFIG SET may change
	acl      aclServer

	stats stats
}

type stats struct {
	connections atomic.Int64
	commands    atomic.Int64
	rejected    atomic.Int64
	errors      atomic.Int64
	perCommand  sync.Map // name → *atomic.Int64
	// gen counts resets: a client's remembered counter is good while it
	// has not changed.
	gen     atomic.Uint64
	unknown atomic.Int64 // calls of unknown commands (not reported)
}

// NewServer returns a server for backend; call Serve to start it.
func NewServer(cfg Config, backend Backend) *Server {
	if cfg.Version == "" {
		cfg.Version = "7.2.0"
	}
	s := &Server{cfg: cfg, backend: backend, started: time.Now(), clients: map[int64]*client{},
		closing: make(chan struct{})}
	s.cluster, _ = backend.(ClusterBackend)
	s.setPassword(cfg.RequirePass)
	if s.cfg.NodeID == "" {
		s.cfg.NodeID = backend.Status().ID
	}
	s.initACL()
	backend.OnKeyReady(func(db int, key []byte) {
		if key == nil {
			s.blocked.wakeAll()
			return
		}
		s.blocked.ready(db, key)
	})
	return s
}

// Listen opens the configured listeners; Serve then serves them. Split so
// callers learn the bound addresses (port 0) before serving.
func (s *Server) Listen() error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return err
	}
	s.listeners = append(s.listeners, ln)
	if s.cfg.UnixSocket != "" {
		os.Remove(s.cfg.UnixSocket)
		uln, err := net.Listen("unix", s.cfg.UnixSocket)
		if err != nil {
			ln.Close()
			return err
		}
		s.listeners = append(s.listeners, uln)
	}
	return nil
}

// Addr returns the TCP listen address (after Listen).
func (s *Server) Addr() net.Addr { return s.listeners[0].Addr() }

// Serve serves every listener until Close.
func (s *Server) Serve() {
	for _, ln := range s.listeners {
		srv := redcon.NewServerNetwork(ln.Addr().Network(), ln.Addr().String(), s.handle, s.accept, s.closedConn)
		gate := newGateListener(ln)
		s.mu.Lock()
		s.servers = append(s.servers, srv)
		s.gates = append(s.gates, gate)
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			srv.Serve(gate)
		}()
	}
}

// drainTimeout bounds how long Close waits for commands in flight.
const drainTimeout = 5 * time.Second

// Close shuts down gracefully: it stops accepting connections, lets the
// commands in flight finish and answer, then closes every connection.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.closing)
	servers := s.servers
	s.mu.Unlock()
	for _, ln := range s.listeners {
		ln.Close()
	}
	deadline := time.Now().Add(drainTimeout)
	for s.active.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	for _, srv := range servers {
		srv.Close()
	}
	s.wg.Wait()
	if s.cfg.UnixSocket != "" {
		os.Remove(s.cfg.UnixSocket)
	}
	return nil
}

func (s *Server) accept(conn redcon.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	c := newClient(s, conn)
	if fc, ok := conn.NetConn().(*framedConn); ok {
		fc.unauth = c.authRequired
	}
	s.clients[c.id] = c
	conn.SetContext(c)
	s.stats.connections.Add(1)
	return true
}

func (s *Server) closedConn(conn redcon.Conn, err error) {
	c, ok := conn.Context().(*client)
	if !ok {
		return
	}
	// redcon reports a connection it handed over (Detach) as closed: it
	// is, once handle returns, which is when redcon reports it.
	s.mu.Lock()
	delete(s.clients, c.id)
	s.mu.Unlock()
	c.close()
}

// handle runs a connection's first request, which redcon parsed, then
// detaches the connection from redcon and serves it here until it ends:
// framedConn parses the requests (once, in place) and the replies of each
// batch leave in one write.
func (s *Server) handle(conn redcon.Conn, cmd redcon.Command) {
	c, ok := conn.Context().(*client)
	fc, fok := conn.NetConn().(*framedConn)
	if !ok || !fok {
		conn.WriteError("ERR internal error: connection without state")
		conn.Close()
		return
	}
	conn.Detach()
	defer fc.Close()
	c.nc = fc.Conn
	c.serveBatch([][][]byte{cmd.Args})
	flush := c.flushOut
	for !c.quit && !c.isKilled() {
		cmds, err := fc.readBatch(flush)
		if err != nil {
			c.flushOut()
			return
		}
		c.serveBatch(cmds)
	}
	c.flushOut()
}

// serveBatch runs a batch of requests; Close waits for it.
func (c *client) serveBatch(cmds [][][]byte) {
	c.s.active.Add(1)
	defer c.s.active.Add(-1)
	c.runBatch(cmds)
}

// password returns the password clients must AUTH with ("" for none).
func (s *Server) password() string { return *s.pass.Load() }

// Password returns the current requirepass ("" for none), which CONFIG SET
// may have changed since start.
func (s *Server) Password() string { return s.password() }

func (s *Server) setPassword(p string) { s.pass.Store(&p) }

func (st *stats) reset() {
	st.commands.Store(0)
	st.rejected.Store(0)
	st.errors.Store(0)
	st.perCommand.Range(func(k, _ any) bool { st.perCommand.Delete(k); return true })
	st.gen.Add(1)
}

// clientList returns the connected clients sorted by id.
func (s *Server) clientList() []*client {
	s.mu.Lock()
	out := make([]*client, 0, len(s.clients))
	for _, c := range s.clients {
		out = append(out, c)
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// commandCounter returns the counter of name's calls (INFO commandstats).
func (s *Server) commandCounter(name string) *atomic.Int64 {
	v, ok := s.stats.perCommand.Load(name)
	if !ok {
		v, _ = s.stats.perCommand.LoadOrStore(name, new(atomic.Int64))
	}
	return v.(*atomic.Int64)
}

// gateListener hands redcon the connections of a real listener. Closing
// the real listener stops new connections at once, while redcon, which
// closes every connection when its Accept fails, is held off until the
// gate itself is closed: after the commands in flight have answered.
type gateListener struct {
	net.Listener
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newGateListener(ln net.Listener) *gateListener {
	g := &gateListener{Listener: ln, conns: make(chan net.Conn), closed: make(chan struct{})}
	go g.acceptLoop()
	return g
}

func (g *gateListener) acceptLoop() {
	for {
		c, err := g.Listener.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil { // e.g. out of file descriptors: back off, retry
			time.Sleep(10 * time.Millisecond)
			continue
		}
		select {
		case g.conns <- c:
		case <-g.closed:
			c.Close()
			return
		}
	}
}

func (g *gateListener) Accept() (net.Conn, error) {
	select {
	case c := <-g.conns:
		return newFramedConn(c), nil
	case <-g.closed:
		return nil, net.ErrClosed
	}
}

func (g *gateListener) Close() error {
	g.once.Do(func() { close(g.closed) })
	return g.Listener.Close()
}
