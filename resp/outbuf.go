package resp

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// client-output-buffer-limit: how many bytes of replies a client may have
// waiting to be sent.
//
// A client's replies are built in one buffer per batch of requests and
// written when the batch is done, so its output buffer is that buffer:
// the replies of the batch so far, and, while they are written, all of
// them until the last byte is written (the part the socket took counts,
// whether the connection's goroutine writes them in one write or the
// event loop writes part and leaves the rest to the goroutine). With a
// hard limit, a client whose buffer reaches it is closed: at once,
// without the replies, and logged, as Redis closes it. A reply that grows
// element by element (ZRANGE, ZRANDMEMBER with a huge count) stops growing
// at the limit (command.Writer.Full), so the limit bounds the memory a
// reply takes while it is built, with the keyspace read-locked. With a
// soft limit, a client whose buffer stays at or above it for longer than
// its seconds is closed the same way; Redis counts whole seconds, so it
// is closed within a second after that. Once its replies are written, the
// time it reached the soft limit is forgotten.
//
// The setting is Redis's, for its three classes of clients; Goblin has
// normal clients only (no replicas, no pub/sub clients), so only the
// normal class's limits act, and the others are kept for CONFIG GET. The
// default is Redis's: none for normal clients; the reply budget
// (replybudget.go) then stands in for a hard limit, so that no client can
// ask for a reply larger than the memory the node has.

// errOutputLimit ends the connection of a client closed for its output
// buffer limit.
var errOutputLimit = errors.New("client closed for overcoming of output buffer limits")

// obufClass is one class's limits.
type obufClass struct{ hard, soft, seconds int64 }

// obufLimits are the limits of Redis's classes, in CONFIG GET's order.
type obufLimits struct{ normal, replica, pubsub obufClass }

// defaultObufLimits are Redis's defaults.
var defaultObufLimits = obufLimits{
	normal:  obufClass{0, 0, 0},
	replica: obufClass{256 << 20, 64 << 20, 60},
	pubsub:  obufClass{32 << 20, 8 << 20, 60},
}

func (l *obufLimits) String() string {
	var b strings.Builder
	for i, c := range []struct {
		name string
		v    obufClass
	}{{"normal", l.normal}, {"slave", l.replica}, {"pubsub", l.pubsub}} {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s %d %d %d", c.name, c.v.hard, c.v.soft, c.v.seconds)
	}
	return b.String()
}

// parseObufLimits parses client-output-buffer-limit as Redis does: groups
// of <class> <hard> <soft> <soft seconds>, each group replacing its
// class's limits in cur; all or nothing.
func parseObufLimits(v string, cur obufLimits) (obufLimits, error) {
	args := strings.Fields(v)
	if len(args)%4 != 0 {
		return cur, errors.New("Wrong number of arguments in buffer limit configuration.")
	}
	for i := 0; i < len(args); i += 4 {
		var class *obufClass
		switch strings.ToLower(args[i]) {
		case "normal":
			class = &cur.normal
		case "slave", "replica":
			class = &cur.replica
		case "pubsub":
			class = &cur.pubsub
		default:
			return cur, errors.New("Invalid client class specified in buffer limit configuration.")
		}
		hard, hok := ParseMemory(args[i+1])
		soft, sok := ParseMemory(args[i+2])
		secs, err := strconv.ParseInt(args[i+3], 10, 64)
		if !hok || !sok || err != nil || secs < 0 {
			return cur, errors.New("Error in hard, soft or soft_seconds setting in buffer limit configuration.")
		}
		*class = obufClass{hard, soft, secs}
	}
	return cur, nil
}

// CheckOutputBufferLimit reports whether v is a valid
// client-output-buffer-limit (Config.OutputBufferLimit).
func CheckOutputBufferLimit(v string) error {
	_, err := parseObufLimits(v, defaultObufLimits)
	return err
}

// outputBufferLimitParam is CONFIG GET/SET client-output-buffer-limit.
func outputBufferLimitParam() param {
	return param{
		name: "client-output-buffer-limit",
		get:  func(s *Server) string { return s.obuf.Load().String() },
		set: func(s *Server, v string) error {
			l, err := parseObufLimits(v, *s.obuf.Load())
			if err != nil {
				return err
			}
			s.obuf.Store(&l)
			return nil
		},
	}
}

// outputLimit returns the normal class's hard limit as a Writer.Limit.
func (s *Server) outputLimit() int {
	return int(min(s.hardOutputLimit(), 1<<62))
}

// checkOutput closes the client when its waiting replies have reached
// the hard limit, or have stayed at or above the soft limit for longer
// than its seconds. It reports whether it closed it.
func (c *client) checkOutput() bool {
	if c.outClosed {
		return true
	}
	l := c.s.obuf.Load().normal
	n := c.waiting()
	if hard := c.s.hardOutputLimit(); hard > 0 && n >= hard || !c.haveRoom(int(n)) {
		c.closeForOutput()
		return true
	}
	if l.soft == 0 || n < l.soft {
		c.softSince = time.Time{}
		return false
	}
	if c.softSince.IsZero() {
		c.softSince = time.Now()
		return false
	}
	if time.Since(c.softSince) > time.Duration(l.seconds+1)*time.Second {
		c.closeForOutput()
		return true
	}
	return false
}

// closeForOutput drops the client's waiting replies and closes it once
// the command it runs returns, logged as Redis logs it.
func (c *client) closeForOutput() {
	c.outClosed = true
	c.s.log().Warn("client closed for overcoming of output buffer limits", "client", c.info())
	c.w.Reset()
	c.mark = 0
	c.releaseReply()
	c.kill()
}

// waiting is the size of the client's output buffer: its replies not yet
// written, with the part of them the socket already took.
func (c *client) waiting() int64 { return int64(c.taken + c.w.Len()) }

// softDeadline is when writing the client's waiting replies must be done
// by under the soft limit (zero: no deadline).
func (c *client) softDeadline() time.Time {
	l := c.s.obuf.Load().normal
	if l.soft == 0 || c.waiting() < l.soft {
		return time.Time{}
	}
	since := c.softSince
	if since.IsZero() {
		since = time.Now()
	}
	return since.Add(time.Duration(l.seconds+1) * time.Second)
}
