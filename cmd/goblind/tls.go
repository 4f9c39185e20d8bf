package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/goblindb/goblin/internal/tlsconf"
	"github.com/goblindb/goblin/resp"
)

// tlsOptions are the client TLS flags, named and meant as Redis's tls-*
// settings, plus --tls-only, Redis's "port 0": --addr keeps its meaning
// as the host the ports bind on and the base of the default Raft and
// gossip ports, so port 0 cannot say "no plaintext port" as it does for
// Redis (tests use --addr 127.0.0.1:0 to get a free port).
type tlsOptions struct {
	port                      int
	certFile, keyFile, caFile string
	authClients               string
	only                      bool
	handshakeTimeout          time.Duration
	watchInterval             time.Duration
}

func (t *tlsOptions) register(fs *flag.FlagSet) {
	fs.IntVar(&t.port, "tls-port", 0, "serve TLS clients on this port, on --addr's host (0: no TLS port)")
	fs.StringVar(&t.certFile, "tls-cert-file", "", "the TLS port's certificate (PEM; may hold the chain)")
	fs.StringVar(&t.keyFile, "tls-key-file", "", "the private key of --tls-cert-file (PEM, unencrypted)")
	fs.StringVar(&t.caFile, "tls-ca-cert-file", "", "CA certificates (PEM) that client certificates are verified against")
	fs.StringVar(&t.authClients, "tls-auth-clients", "yes", "client certificates: yes (required), optional (verified when given) or no (not asked for)")
	fs.BoolVar(&t.only, "tls-only", false, "serve clients on --tls-port only: no plaintext TCP port (a --unixsocket still serves)")
	fs.DurationVar(&t.handshakeTimeout, "tls-handshake-timeout", 10*time.Second, "drop a TLS client that has not completed its handshake within this time")
	fs.DurationVar(&t.watchInterval, "tls-watch-interval", time.Second, "how often to check the TLS files for changes, and reload them when they changed (0: on SIGHUP only)")
}

// clientAuth maps --tls-auth-clients to crypto/tls's policy.
func (t *tlsOptions) clientAuth() (tls.ClientAuthType, error) {
	switch t.authClients {
	case "yes":
		return tls.RequireAndVerifyClientCert, nil
	case "optional":
		return tls.VerifyClientCertIfGiven, nil
	case "no":
		return tls.NoClientCert, nil
	}
	return 0, fmt.Errorf("--tls-auth-clients must be yes, no or optional, not %q", t.authClients)
}

// clientTLS is the client TLS port's certificates, kept current.
type clientTLS struct {
	opts *tlsOptions
	addr string // the TLS listen address
	rl   *tlsconf.Reloader
	auth tls.ClientAuthType
	stop context.CancelFunc
}

// check validates the TLS flags (parseFlags: before anything starts).
func (t *tlsOptions) check() error {
	auth, err := t.clientAuth()
	if err != nil {
		return err
	}
	if t.port == 0 {
		if t.only {
			return errors.New("--tls-only needs --tls-port")
		}
		if t.certFile != "" || t.keyFile != "" || t.caFile != "" {
			return errors.New("--tls-cert-file, --tls-key-file and --tls-ca-cert-file need --tls-port")
		}
		return nil
	}
	switch {
	case t.port < 0 || t.port > 65535:
		return fmt.Errorf("--tls-port %d is not a port", t.port)
	case t.handshakeTimeout <= 0:
		return errors.New("--tls-handshake-timeout must be positive")
	case t.certFile == "" || t.keyFile == "":
		return errors.New("--tls-port needs --tls-cert-file and --tls-key-file")
	case t.caFile == "" && auth != tls.NoClientCert:
		return errors.New("--tls-ca-cert-file is needed to verify client certificates (or set --tls-auth-clients no)")
	}
	return nil
}

// loadClientTLS reads the certificate files of the TLS flags, which
// parseFlags checked (nil when no TLS port is asked for). Then, until
// Close, SIGHUP and a change to any of the files (--tls-watch-interval)
// reload them; each reload is logged.
func loadClientTLS(o *options, logger hclog.Logger) (*clientTLS, error) {
	t := &o.tls
	if err := t.check(); err != nil || t.port == 0 {
		return nil, err
	}
	auth, err := t.clientAuth()
	if err != nil {
		return nil, err
	}
	host, _, err := net.SplitHostPort(o.addr)
	if err != nil {
		return nil, fmt.Errorf("--addr: %w", err)
	}
	rl, err := tlsconf.Load(tlsconf.Files{Cert: t.certFile, Key: t.keyFile, CA: t.caFile})
	if err != nil {
		return nil, fmt.Errorf("TLS: %w", err)
	}
	c := &clientTLS{opts: t, addr: net.JoinHostPort(host, strconv.Itoa(t.port)), rl: rl, auth: auth}
	warnValidity(logger, rl)
	rl.OnReload(func() {
		logger.Info("TLS certificates reloaded", "serial", fmt.Sprintf("%x", rl.Leaf().SerialNumber), "not_after", rl.Leaf().NotAfter)
		warnValidity(logger, rl)
	})
	ctx, stop := context.WithCancel(context.Background())
	c.stop = stop
	if t.watchInterval > 0 {
		go rl.Watch(ctx, t.watchInterval, func(err error) {
			logger.Error("TLS certificate files changed but cannot be loaded; the certificates in use stay", "error", err)
		})
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				if err := rl.Reload(); err != nil {
					logger.Error("SIGHUP: TLS certificates not reloaded; the ones in use stay", "error", err)
				}
			}
		}
	}()
	return c, nil
}

// warnValidity logs a certificate outside its validity period: clients
// refuse it.
func warnValidity(logger hclog.Logger, rl *tlsconf.Reloader) {
	leaf, now := rl.Leaf(), time.Now()
	if now.After(leaf.NotAfter) || now.Before(leaf.NotBefore) {
		logger.Warn("the TLS certificate is not valid now", "file", rl.Files().Cert, "not_before", leaf.NotBefore, "not_after", leaf.NotAfter)
	}
}

// config completes the RESP server's configuration with the TLS port
// (c may be nil: no TLS) and the values CONFIG GET reports.
func (c *clientTLS) config(cfg resp.Config) resp.Config {
	settings := map[string]string{"tls-cert-file": "", "tls-key-file": "", "tls-ca-cert-file": "", "tls-auth-clients": "yes"}
	if c != nil {
		settings = map[string]string{"tls-cert-file": c.opts.certFile, "tls-key-file": c.opts.keyFile,
			"tls-ca-cert-file": c.opts.caFile, "tls-auth-clients": c.opts.authClients}
		cfg.TLSAddr = c.addr
		cfg.TLS = c.rl.ServerConfig(c.auth)
		cfg.TLSHandshakeTimeout = c.opts.handshakeTimeout
		if c.opts.only {
			cfg.Addr = ""
		}
	}
	if cfg.Settings == nil {
		cfg.Settings = map[string]string{}
	}
	for k, v := range settings {
		cfg.Settings[k] = v
	}
	return cfg
}

// Close stops reloading (c may be nil).
func (c *clientTLS) Close() {
	if c != nil {
		c.stop()
	}
}
