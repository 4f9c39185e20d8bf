package resp

import (
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/redcon"

	"github.com/goblindb/goblin/command"
	"github.com/goblindb/goblin/keyspace"
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

	// infoMu guards, for CLIENT LIST and CLIENT INFO run by other
	// connections, the fields the connection's own goroutine changes:
	// name, libName, libVer, db, proto, readonly, multi and its commands.
	// That goroutine changes them under it (setInfo) and reads them
	// without it.
	infoMu                sync.Mutex
	name, libName, libVer string
	db                    int
	proto                 int
	readonly              bool
	acl                   aclClient
	// unix: the connection came through the Unix socket; fd is its
	// socket's descriptor (-1 unknown); monitoring: it ran MONITOR.
	unix       bool
	fd         int
	monitoring atomic.Bool
	// qbuf and qbufFree are the query buffer's bytes held and free
	// space, omem the bytes of replies being written, outCap the reply
	// buffer's size (CLIENT LIST, read by other goroutines).
	qbuf, qbufFree, omem, outCap atomic.Int64

	// lastCmd and lastTime feed CLIENT LIST (read by other goroutines).
	lastCmd  atomic.Pointer[string]
	lastTime atomic.Int64

	multi *multiState // non-nil between MULTI and EXEC/DISCARD
	// capture, while non-nil, collects replies instead of sending them
	// (EXEC splicing the replies of commands the edge runs).
	capture []byte
	watch   watchState

	// nc is the connection's socket, once handle serves it; w holds the
	// replies of the batch being run, written to nc in one go (flushOut).
	nc net.Conn
	w  command.Writer
	// mark is where the reply being built starts in w.
	mark int
	// quit: QUIT ran; the connection closes once its reply is written.
	quit bool
	// outClosed: the client passed its output buffer limit and closes
	// without its replies; softSince is when its waiting replies reached
	// the soft limit (zero: they are under it); taken is how many bytes
	// of them the socket took before the rest was left for the
	// connection's goroutine to write (they count until all are
	// written, as in one write). See outbuf.go.
	outClosed bool
	softSince time.Time
	taken     int
	// replyHeld is what this client's waiting replies hold of the reply
	// budget; overBudget: a reply found none left (replybudget.go).
	replyHeld  int64
	overBudget bool
	pending    []pendingWrite
	// written is the index of this client's last write; a follower may
	// answer a write before applying it (Backend.Propose), so reads here
	// wait for it first (ownWrites).
	written uint64
	// gathered are the batch's consecutive writes not yet proposed; they
	// go to the log as one entry (see proposeGathered). gatheredAt is when
	// the first of them ran; pendingArgv are the pending writes' and the
	// gathered ones' arguments, for the slow log.
	gathered      []raftfsm.Command
	gatheredBytes int           // their arguments' size
	ent           raftfsm.Entry // the entry proposeGathered proposes them in
	// batchStart is when the batch being run started; lastTick when the
	// last command timed ended, relative to it (dispatch.go).
	batchStart  time.Time
	lastTick    time.Duration
	gatheredAt  time.Time
	pendingArgv [][][]byte
	barrier     bool // a read barrier was taken for the current batch
	// view is the keyspace, read-locked, while a run of consecutive reads
	// of a batch executes (nil otherwise); viewNow is its clock and
	// viewRun counts the reads run under it.
	view    *keyspace.Keyspace
	viewNow int64
	viewRun int
	ctx     command.Ctx // a read's context, reused: no allocation per read
	// The last command name looked up, and what it resolved to: a
	// pipeline repeats one command.
	lastName []byte
	lastSpec *command.Spec
	lastRun  edgeFunc
	lastGen  uint64
	lastStat *cmdStat
	// cur is the command being run, whose error replies count as its
	// failed calls (nil: they count only as error replies; cmdstats.go).
	cur *cmdStat
	// pendingStats are the counters of the pending writes, as
	// pendingArgv their arguments.
	pendingStats []*cmdStat
}

func newClient(s *Server, conn redcon.Conn) *client {
	c := &client{
		s:       s,
		conn:    conn,
		id:      s.nextID.Add(1),
		addr:    conn.RemoteAddr(),
		created: time.Now(),
		proto:   2,
	}
	c.initACL()
	c.acl.early = s.aclUnsettled()
	c.fd = -1
	if nc := conn.NetConn(); nc != nil {
		c.laddr = nc.LocalAddr().String()
		c.unix = nc.LocalAddr().Network() == "unix"
		c.fd = socketFD(nc)
	}
	none := "NULL"
	c.lastCmd.Store(&none)
	c.lastTime.Store(time.Now().UnixMilli())
	c.w.Format = doubleFormat(s.cfg.Double70)
	c.w.Room = c.room
	return c
}

// setInfo runs fn, which changes fields infoMu guards, under it.
func (c *client) setInfo(fn func()) {
	c.infoMu.Lock()
	fn()
	c.infoMu.Unlock()
}

func doubleFormat(d70 bool) command.DoubleFormat {
	if d70 {
		return command.Double70
	}
	return command.Double72
}

func (c *client) close() {
	c.s.monitors.remove(c)
	c.releaseReply()
}

// writer returns the client's reply writer, in its protocol, positioned
// for a new reply.
func (c *client) writer() *command.Writer {
	c.mark = c.w.Len()
	c.w.Proto = c.proto
	c.w.Limit = c.s.outputLimit()
	c.w.RoomTo = replyFree + int(c.replyHeld)
	return &c.w
}

// flush ends the reply built since writer: it stays in w, to be sent with
// the batch's others, unless a capture collects it.
func (c *client) flush() {
	if c.mark < c.w.Len() {
		c.noteReply(c.w.Bytes()[c.mark:])
	}
	if c.capture != nil {
		c.capture = append(c.capture, c.w.Bytes()[c.mark:]...)
		c.w.Truncate(c.mark)
	}
}

// send queues reply bytes built elsewhere (a write's result).
func (c *client) send(b []byte) { c.w.Raw(b) }

// maxKeptReplies is the largest reply buffer kept between batches.
const maxKeptReplies = 256 << 10

// flushOut writes the replies gathered so far to the connection; none
// once the client passed its output buffer limit. Replies at or above
// the soft limit must be written within its seconds.
func (c *client) flushOut() error {
	if c.outClosed {
		c.w.Reset()
		return errOutputLimit
	}
	if c.w.Len() == 0 || c.nc == nil {
		return nil
	}
	deadline := c.softDeadline()
	if !deadline.IsZero() {
		c.nc.SetWriteDeadline(deadline)
	}
	c.omem.Store(c.waiting())
	n, err := c.nc.Write(c.w.Bytes())
	c.s.stats.netOut.Add(int64(n))
	if !deadline.IsZero() {
		c.nc.SetWriteDeadline(time.Time{})
		if errors.Is(err, os.ErrDeadlineExceeded) {
			c.closeForOutput()
		}
	}
	c.sent()
	return err
}

// sent ends a flush: the replies written are let go.
func (c *client) sent() {
	c.omem.Store(0)
	c.softSince, c.taken = time.Time{}, 0
	c.outCap.Store(int64(c.w.Cap()))
	if c.w.Cap() > maxKeptReplies {
		c.w = command.Writer{Proto: c.w.Proto, Format: c.w.Format, Room: c.w.Room}
	}
	c.w.Reset()
	c.mark = 0
	c.releaseReply()
}

// reply writes a one-off reply built by fn.
func (c *client) reply(fn func(w *command.Writer)) {
	fn(c.writer())
	c.flush()
}

func (c *client) replyError(err error) {
	c.reply(func(w *command.Writer) { w.Error(err) })
}
