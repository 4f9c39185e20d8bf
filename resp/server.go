package resp

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/tidwall/redcon"
)

// Config configures the RESP edge.
type Config struct {
	Addr       string // TCP listen address; "" for none (TLS only)
	UnixSocket string // optional Unix socket path
	// TLSAddr, when set, is a TLS listen address, served like Addr with
	// TLS as configures it.
	TLSAddr string
	TLS     *tls.Config
	// TLSHandshakeTimeout bounds a TLS handshake (10 s when 0): a peer
	// that has not completed it by then is dropped.
	TLSHandshakeTimeout time.Duration
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
	// MaxClients bounds the client connections open at once (maxclients,
	// maxclients.go); 0: Redis's 10000.
	MaxClients int64
	// QueryBufferLimit bounds a client's incomplete requests in bytes
	// (client-query-buffer-limit, querybuf.go); 0: Redis's 1 GiB.
	QueryBufferLimit int64
	// OutputBufferLimit is client-output-buffer-limit as Redis writes it
	// ("normal 64mb 16mb 60 ..."), outbuf.go; "": Redis's default, no
	// limit for normal clients.
	OutputBufferLimit string
	// EventLoop serves plaintext connections, on Linux, from one event
	// loop while their batches run without waiting (evloop_linux.go);
	// otherwise every connection is served by a goroutine of its own.
	EventLoop bool
	// Logger receives the edge's warnings: maxclients lowered to fit the
	// open-files limit, clients closed for passing a buffer limit. Nil:
	// discarded.
	Logger hclog.Logger
}

// Server serves RESP for one node.
type Server struct {
	cfg     Config
	backend Backend
	cluster ClusterBackend // nil if the backend has no cluster support
	mem     MemoryBackend  // nil if the backend has no memory limit
	started time.Time

	mu        sync.Mutex
	listeners []net.Listener
	tcpLn     net.Listener // in listeners, or nil
	tlsLn     net.Listener // in listeners, or nil
	active    atomic.Int64 // batches run or running, their replies not yet written
	servers   []*redcon.Server
	clients   map[int64]*client
	nextID    atomic.Int64
	wg        sync.WaitGroup
	closed    bool
	closing   chan struct{} // closed when Close starts: blocked clients leave

	blocked blockRegistry
	waits   waitQueue // connections blocked in WAIT
	limit   clientLimit
	// qbufLimit is client-query-buffer-limit; obuf the output buffer
	// limits (outbuf.go).
	qbufLimit atomic.Int64
	obuf      atomic.Pointer[obufLimits]
	// memTotal is the memory this process may use (0: unknown);
	// replyBudget the hard limit of normal clients when none is set, and
	// replyHeld what all clients' waiting replies hold of it
	// (replybudget.go).
	memTotal    atomic.Int64
	replyBudget atomic.Int64
	replyHeld   atomic.Int64
	settings    settings
	pass        atomic.Pointer[string] // requirepass, which CONFIG SET may change
	acl         aclServer

	stats    stats
	slowlog  slowlog
	latency  latencyMonitor
	monitors monitors
	pause    pauseState
	loop     *evLoop // nil: every connection is served by its goroutine
}

type stats struct {
	connections   atomic.Int64
	rejectedConns atomic.Int64 // refused by maxclients
	commands      atomic.Int64
	rejected      atomic.Int64
	errors        atomic.Int64
	errorCodes    errorStats
	perCommand    sync.Map // name → *cmdStat
	// gen counts resets: a client's remembered counter is good while it
	// has not changed.
	gen     atomic.Uint64
	unknown cmdStat // calls of unknown commands (not reported)
	// netIn and netOut count the bytes read from and written to clients;
	// hits and misses the keys read commands found and did not find.
	netIn, netOut atomic.Int64
	hits, misses  atomic.Int64
	// ops samples total_commands_processed for instantaneous_ops_per_sec.
	ops opsMeter
}

// NewServer returns a server for backend; call Serve to start it.
func NewServer(cfg Config, backend Backend) *Server {
	if cfg.Version == "" {
		cfg.Version = "7.2.0"
	}
	s := &Server{cfg: cfg, backend: backend, started: time.Now(), clients: map[int64]*client{},
		closing: make(chan struct{})}
	s.cluster, _ = backend.(ClusterBackend)
	s.mem, _ = backend.(MemoryBackend)
	if s.cfg.Logger == nil {
		s.cfg.Logger = hclog.NewNullLogger()
	}
	if s.cfg.MaxClients <= 0 {
		s.cfg.MaxClients = defaultMaxClients
	}
	s.limit.cap.Store(s.cfg.MaxClients)
	if s.cfg.QueryBufferLimit <= 0 {
		s.cfg.QueryBufferLimit = defaultQueryBufferLimit
	}
	s.qbufLimit.Store(s.cfg.QueryBufferLimit)
	s.obuf.Store(&defaultObufLimits)
	s.memTotal.Store(processMemory())
	s.refreshReplyBudget()
	s.setPassword(cfg.RequirePass)
	if s.cfg.NodeID == "" {
		s.cfg.NodeID = backend.Status().ID
	}
	s.initACL()
	s.slowlog.init()
	if cfg.EventLoop || eventLoopForTests {
		loop, err := newEvLoop(s)
		if err != nil {
			s.cfg.Logger.Warn("serving every connection from its own goroutine", "error", err)
		}
		s.loop = loop
	}
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
// callers learn the bound addresses (port 0) before serving. When one
// fails, those opened before are closed.
func (s *Server) Listen() (err error) {
	switch {
	case s.cfg.Addr == "" && s.cfg.TLSAddr == "" && s.cfg.UnixSocket == "":
		return errors.New("no address to listen on")
	case s.cfg.TLSAddr != "" && s.cfg.TLS == nil:
		return errors.New("a TLS address needs a TLS configuration")
	}
	if err := s.initMaxClients(s.cfg.MaxClients); err != nil {
		return err
	}
	if s.cfg.QueryBufferLimit < minQueryBufferLimit {
		return fmt.Errorf("the query buffer limit must be at least %d bytes", minQueryBufferLimit)
	}
	if s.cfg.OutputBufferLimit != "" {
		l, err := parseObufLimits(s.cfg.OutputBufferLimit, *s.obuf.Load())
		if err != nil {
			return fmt.Errorf("client-output-buffer-limit %q: %w", s.cfg.OutputBufferLimit, err)
		}
		s.obuf.Store(&l)
	}
	defer func() {
		if err != nil {
			for _, ln := range s.listeners {
				ln.Close()
			}
			s.listeners, s.tcpLn, s.tlsLn = nil, nil, nil
		}
	}()
	if s.cfg.Addr != "" {
		if s.tcpLn, err = net.Listen("tcp", s.cfg.Addr); err != nil {
			return err
		}
		s.listeners = append(s.listeners, s.tcpLn)
	}
	if s.cfg.TLSAddr != "" {
		if s.tlsLn, err = net.Listen("tcp", s.cfg.TLSAddr); err != nil {
			return err
		}
		s.listeners = append(s.listeners, s.tlsLn)
	}
	if s.cfg.UnixSocket != "" {
		os.Remove(s.cfg.UnixSocket)
		uln, err := net.Listen("unix", s.cfg.UnixSocket)
		if err != nil {
			return err
		}
		s.listeners = append(s.listeners, uln)
	}
	return nil
}

// Addr returns the TCP listen address (after Listen), nil without one.
func (s *Server) Addr() net.Addr {
	if s.tcpLn == nil {
		return nil
	}
	return s.tcpLn.Addr()
}

// TLSAddr returns the TLS listen address (after Listen), nil without one.
func (s *Server) TLSAddr() net.Addr {
	if s.tlsLn == nil {
		return nil
	}
	return s.tlsLn.Addr()
}

// addrPort returns a listener's port, "0" for none.
func addrPort(a net.Addr) string {
	if a == nil {
		return "0"
	}
	return portOf(a.String())
}

// Serve serves every listener until Close: redcon accepts the
// connections (accept.go).
func (s *Server) Serve() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	go s.meter()
	for _, ln := range s.listeners {
		srv := redcon.NewServerNetwork(ln.Addr().Network(), ln.Addr().String(), s.handle, s.accept, s.closedConn)
		srv.AcceptError = s.acceptError(srv)
		fl := framedListener{Listener: ln}
		if ln == s.tlsLn {
			fl.tls, fl.handshakeTimeout = s.cfg.TLS, s.cfg.TLSHandshakeTimeout
		}
		s.servers = append(s.servers, srv)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			srv.Serve(fl)
		}()
	}
}

// acceptBackoff is how long the accept loop pauses after a failed accept
// (out of file descriptors, say) before it tries again.
const acceptBackoff = 10 * time.Millisecond

// acceptError is redcon's AcceptError for srv. It runs on the accept
// loop: its pause is the loop's backoff. Once the server is closed it
// closes srv, which ends the loop however its listener fails.
func (s *Server) acceptError(srv *redcon.Server) func(error) {
	return func(error) {
		s.mu.Lock()
		closed := s.closed
		s.mu.Unlock()
		if closed {
			srv.Close()
			return
		}
		time.Sleep(acceptBackoff)
	}
}

// drainTimeout bounds how long Close waits for commands in flight.
const drainTimeout = 5 * time.Second

// Close shuts down gracefully: connections accepted from then on are
// closed at once, the commands in flight finish and answer, a connection
// closes instead of running its next commands, then the listeners and
// every connection close. It returns whether or not Serve
// ran, or its listeners failed.
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
	deadline := time.Now().Add(drainTimeout)
	for s.active.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if s.loop != nil {
		s.loop.close()
	}
	// redcon closes its listener and, once its accept loop ends, every
	// connection it accepted: handle serves each in redcon's goroutine
	// for it. A listener whose loop has not started yet is closed here,
	// so the loop ends as soon as it starts.
	for _, srv := range servers {
		srv.Close()
	}
	for _, ln := range s.listeners {
		ln.Close()
	}
	s.wg.Wait()
	if s.cfg.UnixSocket != "" {
		os.Remove(s.cfg.UnixSocket)
	}
	return nil
}

// accept is redcon's accept callback, on the accept loop: it admits the
// connection (maxclients) and makes its client, registered at once, or
// for TLS once the handshake succeeds (accept.go).
func (s *Server) accept(conn redcon.Conn) bool {
	fc, ok := conn.NetConn().(*framedConn)
	if !ok || !s.admit(fc) {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false // redcon closes it, which uncounts it
	}
	c := newClient(s, conn)
	fc.fr.Unauth = c.authRequired
	fc.fr.Limit, fc.fr.OverLimit = &s.qbufLimit, c.queryBufferExceeded
	fc.fr.NetIn = &s.stats.netIn
	fc.fr.Clients = &s.limit.n
	if fc.sock != nil {
		fc.sock.Clients = &s.limit.n
	}
	conn.SetContext(c)
	if fc.tls != nil {
		fc.ready = func() { s.register(c) }
	} else {
		s.registerLocked(c)
	}
	return true
}

// register adds c to the clients CLIENT LIST shows.
func (s *Server) register(c *client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.registerLocked(c)
}

func (s *Server) registerLocked(c *client) {
	s.clients[c.id] = c
	s.stats.connections.Add(1)
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

// handle serves a connection from its first request on: it runs the
// Framer's parse of that request (redcon's is ignored: see accept.go),
// detaches the connection from redcon and serves it here until it ends
// (connloop.go).
func (s *Server) handle(conn redcon.Conn, _ redcon.Command) {
	c, ok := conn.Context().(*client)
	fc, fok := conn.NetConn().(*framedConn)
	if !ok || !fok || fc.first == nil {
		conn.WriteError("ERR internal error: connection without state")
		conn.Close()
		return
	}
	conn.Detach()
	defer fc.Close()
	c.nc = fc.Conn
	l := newConnLoop(s, c, fc)
	defer l.flush()
	if rc := fc.rawConn(); rc != nil {
		if s.loop != nil && fc.tls == nil && s.loop.serve(l, rc) {
			return
		}
		l.serveRaw(rc)
		return
	}
	l.run(false)
}

// log returns the edge's logger.
func (s *Server) log() hclog.Logger { return s.cfg.Logger }

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
	st.errorCodes.reset()
	st.netIn.Store(0)
	st.netOut.Store(0)
	st.hits.Store(0)
	st.misses.Store(0)
	st.rejectedConns.Store(0)
	st.connections.Store(0)
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
