package resp

import (
	"math"
	"strconv"
)

// client-query-buffer-limit: how many bytes of requests not yet complete
// a client may have sent. A request's bytes are buffered until it is
// whole (wire.Framer), and Redis's own bounds (512 MB a bulk string, 64 KB
// an inline line) do not bound a request of many arguments: this does.
// A client whose buffer passes it is closed at once, without a reply and
// without running the requests that came with the bytes that passed it,
// and the close is logged with the buffer's first bytes, as Redis does.
// The buffer never grows much past the limit: it is at most the limit
// plus one read.

// defaultQueryBufferLimit is Redis's client-query-buffer-limit (1 GiB).
const defaultQueryBufferLimit = 1 << 30

// minQueryBufferLimit is the least Redis accepts (1 MiB).
const minQueryBufferLimit = 1 << 20

// queryBufferLimitParam is CONFIG GET/SET client-query-buffer-limit.
func queryBufferLimitParam() param {
	return param{
		name: "client-query-buffer-limit",
		get:  func(s *Server) string { return strconv.FormatInt(s.qbufLimit.Load(), 10) },
		set: func(s *Server, v string) error {
			n, err := parseMemoryBounded(v, minQueryBufferLimit, math.MaxInt64)
			if err != nil {
				return err
			}
			s.qbufLimit.Store(n)
			return nil
		},
	}
}

// queryBufferExceeded is called by a client's Framer when its buffer
// passes the limit: it logs the close.
func (c *client) queryBufferExceeded(initial []byte) {
	c.s.log().Warn("closing client that reached max query buffer length",
		"client", c.info(), "qbuf_initial_bytes", escapeBytes(initial))
}

// escapeBytes writes b on one line, control and non-ASCII bytes escaped
// as Go (and Redis's logs) write them.
func escapeBytes(b []byte) string {
	q := strconv.Quote(string(b))
	return q[1 : len(q)-1]
}
