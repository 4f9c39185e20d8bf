package tlsconf

import (
	"bufio"
	"crypto/tls"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// echoServer serves cfg on a loopback port: each connection, once its
// handshake is done, echoes lines back. It returns the address.
func echoServer(t *testing.T, cfg *tls.Config) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				tc := tls.Server(c, cfg)
				tc.SetDeadline(time.Now().Add(10 * time.Second))
				if tc.Handshake() != nil {
					return
				}
				tc.SetDeadline(time.Time{})
				io.Copy(tc, tc)
			}()
		}
	}()
	return ln.Addr().String()
}

// dialEcho completes a handshake with cfg and checks a line echoes back.
func dialEcho(addr string, cfg *tls.Config) (*tls.Conn, error) {
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return nil, err
	}
	if err := echo(c); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func echo(c *tls.Conn) error {
	c.SetDeadline(time.Now().Add(5 * time.Second))
	defer c.SetDeadline(time.Time{})
	if _, err := io.WriteString(c, "ping\n"); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "ping\n" {
		return io.ErrUnexpectedEOF
	}
	return nil
}

func TestHandshakes(t *testing.T) {
	set := writeSet(t, "server", "client")
	other := writeSet(t, "stranger")["stranger"] // another CA's
	srv, cli := mustLoad(t, set["server"]), mustLoad(t, set["client"])
	noCert := mustLoad(t, Files{CA: set["client"].CA})
	strangerCli := mustLoad(t, Files{Cert: other.Cert, Key: other.Key, CA: set["client"].CA})

	required := echoServer(t, srv.ServerConfig(tls.RequireAndVerifyClientCert))
	optional := echoServer(t, srv.ServerConfig(tls.VerifyClientCertIfGiven))
	strangerSrv := echoServer(t, mustLoad(t, other).ServerConfig(tls.NoClientCert))

	for _, tc := range []struct {
		name string
		addr string
		cfg  *tls.Config
		fail string // "" for success, else a part of the error
	}{
		{"mutual", required, cli.ClientConfig("localhost"), ""},
		{"mutual by IP", required, cli.ClientConfig("127.0.0.1"), ""},
		{"chain only", required, cli.ClientConfig(""), ""},
		{"wrong host name", required, cli.ClientConfig("db.example"), "db.example"},
		{"no client certificate", required, noCert.ClientConfig(""), "certificate"},
		{"client certificate of another CA", required, strangerCli.ClientConfig(""), "certificate"},
		{"optional, none given", optional, noCert.ClientConfig("localhost"), ""},
		{"optional, another CA's given", optional, strangerCli.ClientConfig(""), "certificate"},
		{"server of another CA", strangerSrv, cli.ClientConfig(""), "unknown authority"},
		{"TLS 1.1 client", required, func() *tls.Config {
			c := cli.ClientConfig("")
			c.MinVersion, c.MaxVersion = tls.VersionTLS10, tls.VersionTLS11
			return c
		}(), "version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := dialEcho(tc.addr, tc.cfg)
			if c != nil {
				c.Close()
			}
			switch {
			case tc.fail == "" && err != nil:
				t.Fatalf("failed: %v", err)
			case tc.fail != "" && err == nil:
				t.Fatalf("succeeded, want an error about %q", tc.fail)
			case tc.fail != "" && !strings.Contains(err.Error(), tc.fail):
				t.Errorf("error %q does not mention %q", err, tc.fail)
			}
		})
	}
}

// TestServerWithoutCertificate: a server config from Files without a
// certificate refuses every handshake instead of panicking.
func TestServerWithoutCertificate(t *testing.T) {
	set := writeSet(t, "client")
	addr := echoServer(t, mustLoad(t, Files{CA: set["client"].CA}).ServerConfig(tls.NoClientCert))
	if c, err := dialEcho(addr, mustLoad(t, set["client"]).ClientConfig("")); err == nil {
		c.Close()
		t.Fatal("handshake with a server without a certificate succeeded")
	}
}

// TestReloadServesNewCertificate: after a reload new handshakes get the
// new certificate, and a connection made before keeps working.
func TestReloadServesNewCertificate(t *testing.T) {
	dir := t.TempDir()
	set, err := WriteSet(dir, localHosts, "server", "client")
	if err != nil {
		t.Fatal(err)
	}
	srv, cli := mustLoad(t, set["server"]), mustLoad(t, set["client"])
	addr := echoServer(t, srv.ServerConfig(tls.RequireAndVerifyClientCert))
	cfg := cli.ClientConfig("localhost")
	before, err := dialEcho(addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer before.Close()
	oldSerial := before.ConnectionState().PeerCertificates[0].SerialNumber

	ca, err := LoadCA(set["server"].CA, filepath.Join(dir, "ca.key"))
	if err != nil {
		t.Fatal(err)
	}
	l := issue(t, ca, "server", set["server"])
	if err := srv.Reload(); err != nil {
		t.Fatal(err)
	}
	after, err := dialEcho(addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer after.Close()
	got := after.ConnectionState().PeerCertificates[0].SerialNumber
	if got.Cmp(l.Cert.SerialNumber) != 0 || got.Cmp(oldSerial) == 0 {
		t.Fatalf("served serial %x after reload, want the new %x (old %x)", got, l.Cert.SerialNumber, oldSerial)
	}
	if err := echo(before); err != nil {
		t.Fatalf("connection made before the reload: %v", err)
	}
}

// TestReloadNewCA rotates the whole PKI: a new CA, new certificates on
// both sides. Each side's verification follows its reloaded CA file.
func TestReloadNewCA(t *testing.T) {
	dirA := t.TempDir()
	set, err := WriteSet(dirA, localHosts, "server", "client")
	if err != nil {
		t.Fatal(err)
	}
	srv, cli := mustLoad(t, set["server"]), mustLoad(t, set["client"])
	addr := echoServer(t, srv.ServerConfig(tls.RequireAndVerifyClientCert))
	cfg := cli.ClientConfig("localhost")
	held, err := dialEcho(addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()

	// The new PKI replaces the server's files first: the client, still
	// trusting the old CA only, is refused, and refuses the server.
	if _, err := WriteSet(dirA, localHosts, "server"); err != nil {
		t.Fatal(err)
	}
	if err := srv.Reload(); err != nil {
		t.Fatal(err)
	}
	if c, err := dialEcho(addr, cfg); err == nil {
		c.Close()
		t.Fatal("a client of the old CA was accepted after the CA changed")
	}
	// The client's files follow (same directory, new CA file): accepted.
	ca, err := LoadCA(set["client"].CA, filepath.Join(dirA, "ca.key"))
	if err != nil {
		t.Fatal(err)
	}
	issue(t, ca, "client", set["client"])
	if err := cli.Reload(); err != nil {
		t.Fatal(err)
	}
	c, err := dialEcho(addr, cfg)
	if err != nil {
		t.Fatalf("after both sides reloaded: %v", err)
	}
	c.Close()
	if err := echo(held); err != nil {
		t.Fatalf("connection made before the rotation: %v", err)
	}
}
