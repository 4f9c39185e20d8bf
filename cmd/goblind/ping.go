package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"net"
	"os"

	"github.com/goblindb/goblin/internal/tlsconf"
)

// pingNode sends PING (after AUTH when a password is given) and expects
// +PONG, through goblind's own RESP client (no client library). With
// tlsConfig it connects with TLS.
func pingNode(ctx context.Context, addr, pass string, tlsConfig *tls.Config) error {
	c, err := dialRESP(ctx, addr, tlsConfig, "", pass)
	if err != nil {
		return err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.conn.SetDeadline(dl)
	}
	r, err := c.do("PING")
	if err != nil {
		return err
	}
	if r.Kind != '+' || string(r.Str) != "PONG" {
		return fmt.Errorf("unexpected reply %q", r.Str)
	}
	return nil
}

// pingTLS are ping's TLS flags, as redis-cli names them.
type pingTLS struct {
	on                bool
	cacert, cert, key string
	sni               string
	insecure          bool
}

// registerPingTLS adds ping's TLS flags to fs. The files default to the
// node's own (GOBLIN_TLS_CA_CERT_FILE, GOBLIN_TLS_CERT_FILE,
// GOBLIN_TLS_KEY_FILE): a certificate made for both server and client use
// (goblind gencert's default) passes --tls-auth-clients yes.
func registerPingTLS(fs *flag.FlagSet) *pingTLS {
	p := &pingTLS{}
	fs.BoolVar(&p.on, "tls", false, "connect with TLS (to the node's --tls-port)")
	fs.StringVar(&p.cacert, "cacert", os.Getenv("GOBLIN_TLS_CA_CERT_FILE"), "CA certificates to verify the node's certificate with (default: the system's)")
	fs.StringVar(&p.cert, "cert", os.Getenv("GOBLIN_TLS_CERT_FILE"), "client certificate to present")
	fs.StringVar(&p.key, "key", os.Getenv("GOBLIN_TLS_KEY_FILE"), "private key of --cert")
	fs.StringVar(&p.sni, "sni", "", "server name to send, and to check the node's certificate against (default: none sent, the chain alone is checked)")
	fs.BoolVar(&p.insecure, "insecure", false, "do not verify the node's certificate")
	return p
}

// config returns the TLS configuration the flags ask for (nil without
// --tls). Without --addr, a GOBLIN_TLS_PORT in the environment replaces
// GOBLIN_ADDR's port.
func (p *pingTLS) config(fs *flag.FlagSet, addr *string) (*tls.Config, error) {
	if !p.on {
		return nil, nil
	}
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "addr" })
	if port := os.Getenv("GOBLIN_TLS_PORT"); !set && port != "" {
		host, _, err := net.SplitHostPort(*addr)
		if err != nil {
			return nil, fmt.Errorf("GOBLIN_ADDR: %w", err)
		}
		*addr = net.JoinHostPort(host, port)
	}
	if (p.cert == "") != (p.key == "") {
		return nil, fmt.Errorf("--cert and --key go together")
	}
	rl, err := tlsconf.Load(tlsconf.Files{Cert: p.cert, Key: p.key, CA: p.cacert})
	if err != nil {
		return nil, err
	}
	cfg := rl.ClientConfig(p.sni)
	if p.insecure {
		cfg.VerifyConnection = nil
	}
	return cfg, nil
}
