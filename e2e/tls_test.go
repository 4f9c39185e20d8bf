package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/goblindb/goblin/internal/tlsconf"
)

// pki is a test CA with a server and a client certificate.
type pki struct {
	dir            string
	ca             *tlsconf.CA
	server, client tlsconf.Files
}

func newPKI(t *testing.T) *pki {
	t.Helper()
	dir := t.TempDir()
	set, err := tlsconf.WriteSet(dir, []string{"127.0.0.1", "localhost"}, "server", "client")
	if err != nil {
		t.Fatal(err)
	}
	ca, err := tlsconf.LoadCA(filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key"))
	if err != nil {
		t.Fatal(err)
	}
	return &pki{dir: dir, ca: ca, server: set["server"], client: set["client"]}
}

// reissue writes a new server certificate over the server's files and
// returns its serial number.
func (p *pki) reissue(t *testing.T) *big.Int {
	t.Helper()
	l, err := p.ca.Issue(tlsconf.LeafSpec{Name: "server", Hosts: []string{"127.0.0.1", "localhost"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.WriteFiles(p.server.Cert, p.server.Key); err != nil {
		t.Fatal(err)
	}
	return l.Cert.SerialNumber
}

// clientConfig is what a go-redis user writes: the CA to trust and,
// unless noCert, the client certificate.
func (p *pki) clientConfig(t *testing.T, noCert bool) *tls.Config {
	t.Helper()
	caPEM, err := os.ReadFile(p.server.CA)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	cfg := &tls.Config{RootCAs: pool, ServerName: "localhost", MinVersion: tls.VersionTLS12}
	if !noCert {
		cert, err := tls.LoadX509KeyPair(p.client.Cert, p.client.Key)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg
}

// tlsNode is a goblind serving a TLS port.
type tlsNode struct {
	*Goblind
	TLSAddr string
}

// startTLSNode starts goblind with a TLS port and the pki's server
// certificate; extra flags follow. It waits until the TLS port answers
// PING (NOAUTH is an answer).
func startTLSNode(t *testing.T, p *pki, extra ...string) *tlsNode {
	t.Helper()
	tlsAddr := testutil.FreeAddr(t, "")
	args := append([]string{"--tls-port", fmt.Sprint(portOf(t, tlsAddr)),
		"--tls-cert-file", p.server.Cert, "--tls-key-file", p.server.Key, "--tls-ca-cert-file", p.server.CA}, extra...)
	g := StartGoblind(t, NodeOptions{Args: args, NoWait: true})
	n := &tlsNode{Goblind: g, TLSAddr: tlsAddr}
	c := redis.NewClient(&redis.Options{Addr: tlsAddr, TLSConfig: p.clientConfig(t, false), MaxRetries: -1})
	defer c.Close()
	testutil.Eventually(t, 20*time.Second, func() error {
		if !g.Running() {
			t.Fatalf("goblind exited:\n%s", g.Log())
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := c.Ping(ctx).Err(); err != nil && !strings.HasPrefix(err.Error(), "NOAUTH") {
			return err
		}
		return nil
	})
	return n
}

// TLSClient returns a go-redis client of the TLS port, closed at test end.
func (n *tlsNode) TLSClient(cfg *tls.Config, opts ...func(*redis.Options)) *redis.Client {
	return n.Client(append([]func(*redis.Options){func(o *redis.Options) {
		o.Addr, o.TLSConfig = n.TLSAddr, cfg
	}}, opts...)...)
}

// servedSerial makes a new TLS connection and returns the serial number
// of the certificate the server presented.
func servedSerial(t *testing.T, addr string, cfg *tls.Config) *big.Int {
	t.Helper()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].SerialNumber
}

func (g *Goblind) sighup(t *testing.T) {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
}

// redisCLI finds a redis-cli that speaks TLS, or skips the test (fails
// with GOBLIN_REQUIRE_REDIS=1).
func redisCLI(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("redis-cli")
	if err == nil {
		out, _ := exec.Command(path, "--help").CombinedOutput()
		if !strings.Contains(string(out), "--tls") {
			err = fmt.Errorf("%s was built without TLS", path)
		}
	}
	if err != nil {
		if os.Getenv("GOBLIN_REQUIRE_REDIS") == "1" {
			t.Fatalf("no redis-cli with TLS and GOBLIN_REQUIRE_REDIS=1: %v", err)
		}
		t.Skipf("no redis-cli with TLS: %v", err)
	}
	return path
}

// TestTLSRedisCLI runs redis-cli --tls against each --tls-auth-clients
// mode, with and without a client certificate.
func TestTLSRedisCLI(t *testing.T) {
	cli := redisCLI(t)
	p := newPKI(t)
	run := func(n *tlsNode, withCert bool, args ...string) (string, error) {
		host, port, _ := net.SplitHostPort(n.TLSAddr)
		base := []string{"-h", host, "-p", port, "--tls", "--cacert", p.server.CA}
		if withCert {
			base = append(base, "--cert", p.client.Cert, "--key", p.client.Key)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, cli, append(base, args...)...).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	for _, tc := range []struct {
		mode      string
		noCertOK  bool
		extraArgs []string
	}{
		{"yes", false, nil},
		{"optional", true, nil},
		{"no", true, []string{"--tls-only"}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			n := startTLSNode(t, p, append([]string{"--tls-auth-clients", tc.mode}, tc.extraArgs...)...)
			if out, err := run(n, true, "ZADD", "board", "1", "a", "2", "b"); err != nil || out != "2" {
				t.Fatalf("ZADD with a client certificate: %q, %v", out, err)
			}
			if out, err := run(n, true, "ZRANGE", "board", "0", "-1", "WITHSCORES"); err != nil || out != "a\n1\nb\n2" {
				t.Fatalf("ZRANGE: %q, %v", out, err)
			}
			if out, err := run(n, true, "CONFIG", "GET", "tls-auth-clients"); err != nil || out != "tls-auth-clients\n"+tc.mode {
				t.Fatalf("CONFIG GET tls-auth-clients: %q, %v", out, err)
			}
			out, err := run(n, false, "PING")
			if ok := err == nil && out == "PONG"; ok != tc.noCertOK {
				t.Fatalf("PING without a client certificate: %q, %v (want accepted: %v)", out, err, tc.noCertOK)
			}
		})
	}
}

// TestTLSGoRedis serves both ports at once: go-redis pipelines on the TLS
// port see the writes made on the TCP port and the other way round.
func TestTLSGoRedis(t *testing.T) {
	p := newPKI(t)
	n := startTLSNode(t, p, "--requirepass", "s3cret")
	auth := func(o *redis.Options) { o.Password = "s3cret" }
	ctx := context.Background()
	clients := map[string]*redis.Client{
		"tls":       n.TLSClient(p.clientConfig(t, false), auth),
		"tls-resp3": n.TLSClient(p.clientConfig(t, false), auth, func(o *redis.Options) { o.Protocol = 3 }),
		"tcp":       n.Client(auth),
	}
	for name, c := range clients {
		pipe := c.Pipeline()
		for i := range 200 {
			pipe.ZAdd(ctx, "k:"+name, redis.Z{Score: float64(i), Member: fmt.Sprint("m", i)})
		}
		card := pipe.ZCard(ctx, "k:"+name)
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatalf("%s: pipeline: %v", name, err)
		}
		if card.Val() != 200 {
			t.Fatalf("%s: ZCARD in the pipeline = %d", name, card.Val())
		}
	}
	for name, c := range clients {
		for other := range clients {
			if got, err := c.ZCard(ctx, "k:"+other).Result(); err != nil || got != 200 {
				t.Errorf("%s reads k:%s: %d, %v", name, other, got, err)
			}
		}
	}
	// CLUSTER SLOTS gives TLS clients the TLS port, others the TCP port
	// (as Redis 7.2), so a cluster client over TLS stays on TLS.
	for name, want := range map[string]string{"tls": n.TLSAddr, "tcp": n.Addr} {
		testutil.Eventually(t, 20*time.Second, func() error {
			slots, err := clients[name].ClusterSlots(ctx).Result()
			if err != nil {
				return err
			}
			if len(slots) != 1 || len(slots[0].Nodes) == 0 || slots[0].Nodes[0].Addr != want {
				return fmt.Errorf("%s: CLUSTER SLOTS = %+v, want the master at %s", name, slots, want)
			}
			return nil
		})
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{n.TLSAddr}, TLSConfig: p.clientConfig(t, false), Password: "s3cret"})
	defer cc.Close()
	pipe := cc.Pipeline()
	for i := range 50 {
		pipe.ZAdd(ctx, fmt.Sprint("cluster:", i), redis.Z{Score: 1, Member: "m"})
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatalf("ClusterClient pipeline over TLS: %v", err)
	}
	if got, err := clients["tcp"].Exists(ctx, "cluster:0", "cluster:49").Result(); err != nil || got != 2 {
		t.Fatalf("the cluster client's writes: EXISTS = %d, %v", got, err)
	}
	// Without the password the TLS port answers as the TCP one does.
	bare := n.TLSClient(p.clientConfig(t, false))
	if err := bare.Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
		t.Fatalf("PING without AUTH on the TLS port: %v", err)
	}
	// A TLS client without a certificate is refused (--tls-auth-clients
	// defaults to yes).
	nocert := n.TLSClient(p.clientConfig(t, true), auth)
	if err := nocert.Ping(ctx).Err(); err == nil {
		t.Fatal("a TLS client without a certificate was served")
	}
}

// TestTLSReload: new certificate files are served to new connections after
// SIGHUP, and with no signal after the file watch sees them; a connection
// made before each reload keeps working.
func TestTLSReload(t *testing.T) {
	p := newPKI(t)
	cfg := p.clientConfig(t, false)
	t.Run("SIGHUP", func(t *testing.T) {
		n := startTLSNode(t, p, "--tls-watch-interval", "0")
		held := n.TLSClient(cfg, func(o *redis.Options) { o.PoolSize = 1 })
		ctx := context.Background()
		if err := held.ZAdd(ctx, "held", redis.Z{Score: 1, Member: "a"}).Err(); err != nil {
			t.Fatal(err)
		}
		old := servedSerial(t, n.TLSAddr, cfg)
		serial := p.reissue(t)
		// With no watch, the files alone change nothing...
		if got := servedSerial(t, n.TLSAddr, cfg); got.Cmp(old) != 0 {
			t.Fatalf("serial %x served before SIGHUP, want the old %x", got, old)
		}
		n.sighup(t)
		testutil.Eventually(t, 10*time.Second, func() error {
			if got := servedSerial(t, n.TLSAddr, cfg); got.Cmp(serial) != 0 {
				return fmt.Errorf("served serial %x, want %x", got, serial)
			}
			return nil
		})
		if got, err := held.ZCard(ctx, "held").Result(); err != nil || got != 1 {
			t.Fatalf("the connection made before the reload: %d, %v", got, err)
		}
		if !n.Running() {
			t.Fatal("SIGHUP stopped goblind")
		}
	})
	t.Run("watch", func(t *testing.T) {
		n := startTLSNode(t, p, "--tls-watch-interval", "50ms", "--tls-only")
		held := n.TLSClient(cfg, func(o *redis.Options) { o.PoolSize = 1 })
		ctx := context.Background()
		if err := held.ZAdd(ctx, "held", redis.Z{Score: 1, Member: "a"}).Err(); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			serial := p.reissue(t)
			testutil.Eventually(t, 10*time.Second, func() error {
				if got := servedSerial(t, n.TLSAddr, cfg); got.Cmp(serial) != 0 {
					return fmt.Errorf("served serial %x, want %x", got, serial)
				}
				return nil
			})
			if got, err := held.ZCard(ctx, "held").Result(); err != nil || got != 1 {
				t.Fatalf("the connection made before the reload: %d, %v", got, err)
			}
		}
		// A broken file is logged and the certificate in use stays.
		before := servedSerial(t, n.TLSAddr, cfg)
		if err := os.WriteFile(p.server.Cert, []byte("not a certificate\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, 10*time.Second, func() error {
			if !strings.Contains(n.Log(), "certificate file "+p.server.Cert+": no PEM certificate") {
				return fmt.Errorf("no error naming %s logged", p.server.Cert)
			}
			return nil
		})
		if got := servedSerial(t, n.TLSAddr, cfg); got.Cmp(before) != 0 {
			t.Fatalf("served serial %x after a broken file, want %x", got, before)
		}
	})
}

// TestTLSHandshakeStalls: peers that connect to the TLS port and send
// nothing, or plaintext RESP, do not hold up other clients, and are
// dropped.
func TestTLSHandshakeStalls(t *testing.T) {
	p := newPKI(t)
	n := startTLSNode(t, p, "--tls-handshake-timeout", "500ms")
	var peers []net.Conn
	for range 20 {
		c, err := net.DialTimeout("tcp", n.TLSAddr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		peers = append(peers, c)
	}
	plain := peers[len(peers)-1]
	if _, err := plain.Write(EncodeCommand("PING")); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tcp := n.Client()
	for name, c := range map[string]*redis.Client{"tls": n.TLSClient(p.clientConfig(t, false)), "tcp": tcp} {
		if err := c.Ping(ctx).Err(); err != nil {
			t.Fatalf("%s client while peers stall the TLS handshake: %v", name, err)
		}
	}
	list, err := tcp.ClientList(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(list, "id="); got != 2 {
		t.Errorf("CLIENT LIST shows %d clients, want the 2 served:\n%s", got, list)
	}
	for i, c := range peers {
		c.SetReadDeadline(time.Now().Add(15 * time.Second))
		b, err := io.ReadAll(c)
		if err != nil {
			t.Fatalf("peer %d was not dropped: %v", i, err)
		}
		if strings.Contains(string(b), "PONG") {
			t.Fatalf("a plaintext PING on the TLS port was answered: %q", b)
		}
	}
}

// TestTLSBadFilesAtStartup: goblind exits non-zero and names the file.
func TestTLSBadFilesAtStartup(t *testing.T) {
	p := newPKI(t)
	bad := filepath.Join(t.TempDir(), "bad.crt")
	if err := os.WriteFile(bad, []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "missing.key")
	for _, tc := range []struct {
		name, file string
		args       []string
	}{
		{"corrupt certificate", bad, []string{"--tls-cert-file", bad, "--tls-key-file", p.server.Key}},
		{"missing key", missing, []string{"--tls-cert-file", p.server.Cert, "--tls-key-file", missing}},
		{"key of another certificate", p.client.Key, []string{"--tls-cert-file", p.server.Cert, "--tls-key-file", p.client.Key}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--tls-port", fmt.Sprint(portOf(t, testutil.FreeAddr(t, ""))), "--tls-ca-cert-file", p.server.CA}, tc.args...)
			g := StartGoblind(t, NodeOptions{Args: args, NoWait: true})
			testutil.Eventually(t, 20*time.Second, func() error {
				if g.Running() {
					return fmt.Errorf("goblind still running")
				}
				return nil
			})
			if g.ExitCode() == 0 {
				t.Fatalf("exit code 0:\n%s", g.Log())
			}
			if !strings.Contains(g.Log(), tc.file) {
				t.Fatalf("the error does not name %s:\n%s", tc.file, g.Log())
			}
		})
	}
}

// TestTLSOnlyAndPing: with --tls-only no plaintext port listens, and
// goblind ping reaches the node with --tls.
func TestTLSOnlyAndPing(t *testing.T) {
	p := newPKI(t)
	n := startTLSNode(t, p, "--tls-only")
	if c, err := net.DialTimeout("tcp", n.Addr, 2*time.Second); err == nil {
		c.Close()
		t.Fatalf("a plaintext port listens at %s with --tls-only", n.Addr)
	}
	ctx := context.Background()
	c := n.TLSClient(p.clientConfig(t, false))
	cfg, err := c.ConfigGet(ctx, "*port").Result()
	if err != nil {
		t.Fatal(err)
	}
	if cfg["port"] != "0" || cfg["tls-port"] != fmt.Sprint(portOf(t, n.TLSAddr)) {
		t.Fatalf("CONFIG GET *port = %v", cfg)
	}
	ping := func(args ...string) (string, error) {
		cmd := exec.Command(goblindBin, append([]string{"ping", "--timeout", "10s"}, args...)...)
		cmd.Env = os.Environ()
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	if out, err := ping("--tls", "--addr", n.TLSAddr, "--cacert", p.server.CA, "--cert", p.client.Cert, "--key", p.client.Key); err != nil || out != "PONG" {
		t.Fatalf("goblind ping --tls: %q, %v", out, err)
	}
	if out, err := ping("--tls", "--addr", n.TLSAddr, "--cacert", p.server.CA, "--sni", "localhost", "--cert", p.client.Cert, "--key", p.client.Key); err != nil || out != "PONG" {
		t.Fatalf("goblind ping --tls --sni localhost: %q, %v", out, err)
	}
	for _, args := range [][]string{
		{"--tls", "--addr", n.TLSAddr, "--cacert", p.server.CA},                                                                        // no client certificate
		{"--tls", "--addr", n.TLSAddr, "--cacert", p.client.Cert, "--cert", p.client.Cert, "--key", p.client.Key},                      // wrong CA
		{"--tls", "--addr", n.TLSAddr, "--cacert", p.server.CA, "--sni", "db.example", "--cert", p.client.Cert, "--key", p.client.Key}, // wrong name
		{"--addr", n.TLSAddr}, // plaintext to the TLS port
	} {
		if out, err := ping(args...); err == nil {
			t.Errorf("goblind ping %q succeeded: %q", args, out)
		}
	}
}
