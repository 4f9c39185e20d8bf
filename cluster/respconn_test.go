package cluster

import (
	"context"
	"errors"
	"net"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/redcon"

	"github.com/goblindb/goblin/node"
)

// echoPeer answers every command with its first argument as an integer,
// in order, and closes the connection after closeAfter commands (never
// when 0). It reports how many reads carried the commands.
func echoPeer(t *testing.T, closeAfter int) (addr string, reads func() int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	n := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		rd := redcon.NewReader(nc)
		served := 0
		for {
			cmds, err := rd.ReadCommands()
			if err != nil {
				return
			}
			mu.Lock()
			n++
			mu.Unlock()
			var out []byte
			for _, cmd := range cmds {
				if closeAfter > 0 && served == closeAfter {
					nc.Write(out)
					return
				}
				out = append(out, ':')
				out = append(out, cmd.Args[0]...)
				out = append(out, "\r\n"...)
				served++
			}
			if _, err := nc.Write(out); err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
	})
	return ln.Addr().String(), func() int {
		mu.Lock()
		defer mu.Unlock()
		return n
	}
}

func dialConn(t *testing.T, addr string) *conn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c := newConn(nc)
	t.Cleanup(c.close)
	return c
}

// Concurrent senders share writes, and every reply still reaches the call
// of its own request.
func TestConnConcurrentSendersGetTheirReplies(t *testing.T) {
	addr, reads := echoPeer(t, 0)
	c := dialConn(t, addr)
	const senders, each = 32, 300
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, senders)
	for s := 0; s < senders; s++ {
		wg.Add(1)
		go func(s int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				want := int64(s*each + i)
				cl, err := c.send([]byte(strconv.FormatInt(want, 10)))
				if err != nil {
					errs <- err
					return
				}
				v, err := cl.wait(ctx)
				if err != nil {
					errs <- err
					return
				}
				if v.Kind != ':' || v.Num != want {
					errs <- errors.New("sender " + strconv.Itoa(s) + " got " + strconv.FormatInt(v.Num, 10) + ", want " + strconv.FormatInt(want, 10))
					return
				}
			}
		}(s)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("%d requests in %d reads by the peer", senders*each, reads())
}

// countingConn counts the writes made on a connection.
type countingConn struct {
	net.Conn
	writes atomic.Int64
}

func (c *countingConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

// On a gathering connection, senders made runnable together (as a batch
// of applied writes wakes the clients that forward their next ones) share
// one write: the first yields before writing, and the others append
// meanwhile.
func TestConnSendersRunnableTogetherShareAWrite(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	addr, _ := echoPeer(t, 0)
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	cc := &countingConn{Conn: nc}
	c := newConn(cc)
	c.gather = true
	t.Cleanup(c.close)
	const senders = 20
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := make(chan struct{})
	errs := make(chan error, senders)
	var ready, wg sync.WaitGroup
	for s := 0; s < senders; s++ {
		ready.Add(1)
		wg.Add(1)
		go func(s int) {
			defer wg.Done()
			ready.Done()
			<-start
			cl, err := c.send([]byte(strconv.Itoa(s)))
			if err == nil {
				var v value
				if v, err = cl.wait(ctx); err == nil && v.Num != int64(s) {
					err = errors.New("sender " + strconv.Itoa(s) + " got " + strconv.FormatInt(v.Num, 10))
				}
			}
			errs <- err
		}(s)
	}
	ready.Wait()
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if w := cc.writes.Load(); w > senders/4 {
		t.Fatalf("%d senders runnable together took %d writes", senders, w)
	} else {
		t.Logf("%d senders runnable together took %d writes", senders, w)
	}
}

// When the peer goes away, every call waiting fails with errBroken, and
// later sends fail at once.
func TestConnBrokenFailsEveryWaitingCall(t *testing.T) {
	addr, _ := echoPeer(t, 5)
	c := dialConn(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var calls []*call
	for i := 0; i < 20; i++ {
		cl, err := c.send([]byte(strconv.Itoa(i)))
		if err != nil {
			break // the connection broke while sending: also allowed
		}
		calls = append(calls, cl)
	}
	answered, broken := 0, 0
	for i, cl := range calls {
		v, err := cl.wait(ctx)
		switch {
		case err == nil && v.Num == int64(i):
			answered++
		case errors.Is(err, errBroken):
			broken++
		default:
			t.Fatalf("call %d: reply %+v, error %v", i, v, err)
		}
	}
	if answered > 5 || answered+broken != len(calls) || broken == 0 {
		t.Fatalf("%d answered, %d broken of %d calls; the peer answers 5", answered, broken, len(calls))
	}
	deadline := time.Now().Add(5 * time.Second)
	for !c.broken() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := c.send([]byte("1")); !errors.Is(err, errBroken) {
		t.Fatalf("send on a broken connection: %v, want errBroken", err)
	}
}

// A request queued behind a write that fails was never sent: its call
// fails with errNotSent (the entry is proposed again), while the request
// being written fails with errBroken (its outcome is unknown).
func TestConnQueuedBehindAFailedWriteIsNotSent(t *testing.T) {
	local, remote := net.Pipe() // a write blocks until the peer reads
	c := newConn(local)
	t.Cleanup(c.close)
	first := make(chan *call, 1)
	go func() {
		cl, err := c.send([]byte("1"))
		if err != nil {
			t.Error(err)
		}
		first <- cl
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.mu.Lock()
		writing := c.writing && len(c.pend) == 0 // the request is in a write
		c.mu.Unlock()
		if writing {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first send never started writing")
		}
		time.Sleep(time.Millisecond)
	}
	second, err := c.send([]byte("2"))
	if err != nil {
		t.Fatal(err)
	}
	remote.Close() // the blocked write fails
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := (<-first).wait(ctx); !errors.Is(err, errBroken) || errors.Is(err, errNotSent) {
		t.Fatalf("the request being written: %v, want errBroken", err)
	}
	if _, err := second.wait(ctx); !errors.Is(err, errNotSent) {
		t.Fatalf("the request queued behind it: %v, want errNotSent", err)
	}
	fw := &forwarded{cl: second, leader: "n1"}
	if _, _, err := fw.Result(); !errors.Is(err, node.ErrNoLeader) {
		t.Fatalf("a forwarded entry never sent: %v, want node.ErrNoLeader (proposed again)", err)
	}
}
