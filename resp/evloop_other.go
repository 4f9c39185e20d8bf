//go:build !linux

package resp

import (
	"errors"
	"syscall"
)

// evLoop is Linux's (evloop_linux.go); elsewhere every connection is
// served by its goroutine.
type evLoop struct{}

func newEvLoop(*Server) (*evLoop, error) {
	return nil, errors.New("the event loop needs Linux's epoll")
}

func (*evLoop) serve(*connLoop, syscall.RawConn) bool { return false }

func (*evLoop) close() {}

func (s *Server) loopCounts() (batches, handOffs int64) { return 0, 0 }
