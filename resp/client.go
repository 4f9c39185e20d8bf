package resp

import (
	"sync/atomic"
	"time"

	"github.com/tidwall/redcon"

	"github.com/goblindb/goblin/command"
	"github.com/goblindb/goblin/raftfsm"
)

// client is one connection's state.
type client struct {
	s       *Server
	conn    redcon.Conn
	id      int64
	addr    string
	laddr   string
	created time.Time

	name, libName, libVer string
	db                    int
	proto                 int
	authed                bool
	readonly              bool

	// lastCmd and lastTime feed CLIENT LIST (read by other goroutines).
	lastCmd  atomic.Pointer[string]
	lastTime atomic.Int64

	multi *multiState // non-nil between MULTI and EXEC/DISCARD
	// capture, while non-nil, collects replies instead of sending them
	// (EXEC splicing the replies of commands the edge runs).
	capture []byte
	watch   watchState

	w       command.Writer
	pending []func() (raftfsm.Result, error)
	// gathered are the batch's consecutive writes not yet proposed; they
	// go to the log as one entry (see proposeGathered).
	gathered []raftfsm.Command
	barrier  bool // a read barrier was taken for the current batch
	batch    []redcon.Command
}

func newClient(s *Server, conn redcon.Conn) *client {
	c := &client{
		s:       s,
		conn:    conn,
		id:      s.nextID.Add(1),
		addr:    conn.RemoteAddr(),
		created: time.Now(),
		proto:   2,
		authed:  s.password() == "",
	}
	if nc := conn.NetConn(); nc != nil {
		c.laddr = nc.LocalAddr().String()
	}
	none := "NULL"
	c.lastCmd.Store(&none)
	c.lastTime.Store(time.Now().UnixMilli())
	c.w.Format = doubleFormat(s.cfg.Double70)
	return c
}

func doubleFormat(d70 bool) command.DoubleFormat {
	if d70 {
		return command.Double70
	}
	return command.Double72
}

func (c *client) close() {}

// writer returns the client's reply writer, emptied, in its protocol.
func (c *client) writer() *command.Writer {
	c.w.Reset()
	c.w.Proto = c.proto
	return &c.w
}

// flush writes what the writer holds to the connection.
func (c *client) flush() {
	if c.capture != nil {
		c.capture = append(c.capture, c.w.Bytes()...)
		return
	}
	c.conn.WriteRaw(c.w.Bytes())
}

// reply writes a one-off reply built by fn.
func (c *client) reply(fn func(w *command.Writer)) {
	fn(c.writer())
	c.flush()
}

func (c *client) replyError(err error) {
	c.s.stats.errors.Add(1)
	c.reply(func(w *command.Writer) { w.Error(err) })
}
