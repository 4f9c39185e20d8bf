package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/goblindb/goblin/cluster"
	"github.com/goblindb/goblin/internal/tlsconf"
)

// planeOptions are the credentials of the node-to-node plane (Raft RPCs
// and forwarding) and of gossip. Secrets are read from files or from the
// environment, never from the command line, where ps and /proc would show
// them.
type planeOptions struct {
	secretFile                   string
	tlsCert, tlsKey, tlsCA       string
	gossipKeyFile                string
	secretsEnv, gossipKeyEnv     string // GOBLIN_CLUSTER_SECRET, GOBLIN_GOSSIP_KEY
	secretsGiven, gossipKeyGiven bool
}

func (p *planeOptions) register(fs *flag.FlagSet) {
	fs.Func("cluster-secret-file", "`file` holding the cluster secret (at least 32 bytes; more lines: older secrets still accepted, for rotation); or set GOBLIN_CLUSTER_SECRET. Authenticates and encrypts Raft, forwarding and gossip", func(v string) error {
		// An empty name (an unset shell variable) must not start a node
		// without credentials.
		if strings.TrimSpace(v) == "" {
			return errors.New("no file named")
		}
		p.secretFile = v
		return nil
	})
	fs.StringVar(&p.tlsCert, "cluster-tls-cert-file", "", "this node's certificate for the node-to-node plane (mutual TLS; with --cluster-tls-key-file and --cluster-tls-ca-file)")
	fs.StringVar(&p.tlsKey, "cluster-tls-key-file", "", "the private key of --cluster-tls-cert-file")
	fs.StringVar(&p.tlsCA, "cluster-tls-ca-file", "", "CA certificates a peer's certificate must chain to")
	fs.StringVar(&p.gossipKeyFile, "gossip-key-file", "", "file of base64 gossip keys (16, 24 or 32 bytes), one per line, the first encrypting; or set GOBLIN_GOSSIP_KEY (default with a cluster secret: derived from it)")
}

// readEnv takes the secrets given in the environment.
func (p *planeOptions) readEnv() {
	p.secretsEnv, p.secretsGiven = os.LookupEnv("GOBLIN_CLUSTER_SECRET")
	p.gossipKeyEnv, p.gossipKeyGiven = os.LookupEnv("GOBLIN_GOSSIP_KEY")
}

// planeCreds are the loaded credentials; all nil in protected mode.
type planeCreds struct {
	secret     *cluster.SecretCredentials
	files      *tlsconf.Reloader
	gossipKeys [][]byte
}

func (c *planeCreds) credentials() cluster.Credentials {
	switch {
	case c.secret != nil:
		return c.secret
	case c.files != nil:
		return fileCreds{c.files}
	}
	return nil
}

// fileCreds are mutual TLS from certificate files: peers are checked
// against the CA, not against a host name.
type fileCreds struct{ r *tlsconf.Reloader }

func (f fileCreds) ServerConfig() *tls.Config {
	c := f.r.ServerConfig(tls.RequireAndVerifyClientCert)
	c.MinVersion = tls.VersionTLS13
	return c
}

func (f fileCreds) ClientConfig() *tls.Config {
	c := f.r.ClientConfig("")
	c.MinVersion = tls.VersionTLS13
	return c
}

var errProtected = errors.New("cluster mode on a non-loopback address needs credentials for the node-to-node plane: " +
	"give --cluster-secret-file (or GOBLIN_CLUSTER_SECRET), or --cluster-tls-cert-file, --cluster-tls-key-file and --cluster-tls-ca-file; " +
	"without them the Raft and gossip ports may only listen on, and advertise, loopback addresses")

// load reads the credentials for node id and checks the addresses: with
// no credentials every node-to-node address must be loopback (Goblin's
// protected mode), and credentials from files need a gossip key too.
func (p *planeOptions) load(id string, addrs map[string]string) (*planeCreds, error) {
	tlsSet := p.tlsCert != "" || p.tlsKey != "" || p.tlsCA != ""
	secretSet := p.secretFile != "" || p.secretsGiven
	if tlsSet && (p.tlsCert == "" || p.tlsKey == "" || p.tlsCA == "") {
		return nil, errors.New("--cluster-tls-cert-file, --cluster-tls-key-file and --cluster-tls-ca-file go together")
	}
	if tlsSet && secretSet {
		return nil, errors.New("give either a cluster secret or --cluster-tls-* files, not both")
	}
	creds := &planeCreds{}
	secrets, err := p.secrets()
	if err != nil {
		return nil, err
	}
	if secretSet {
		if creds.secret, err = cluster.NewSecretCredentials(id, secrets); err != nil {
			return nil, err
		}
	}
	if tlsSet {
		if creds.files, err = tlsconf.Load(tlsconf.Files{Cert: p.tlsCert, Key: p.tlsKey, CA: p.tlsCA}); err != nil {
			return nil, fmt.Errorf("cluster TLS: %w", err)
		}
	}
	if creds.gossipKeys, err = p.gossipKeys(secrets); err != nil {
		return nil, err
	}
	if !secretSet && !tlsSet {
		for flagName, addr := range addrs {
			if !isLoopback(addr) {
				return nil, fmt.Errorf("%w (%s %s)", errProtected, flagName, addr)
			}
		}
	}
	if tlsSet && len(creds.gossipKeys) == 0 {
		for _, addr := range addrs {
			if !isLoopback(addr) {
				return nil, errors.New("with --cluster-tls-* files, gossip needs its own key off loopback: give --gossip-key-file or GOBLIN_GOSSIP_KEY (for example: openssl rand -base64 32)")
			}
		}
	}
	return creds, nil
}

// gossipKeySetter replaces the gossip keyring (cluster.Cluster).
type gossipKeySetter interface {
	SetGossipKeys(keys [][]byte) error
}

// reload reads the credential files again (SIGHUP): new connections use
// the new material, established ones are kept.
// A secret that is refused leaves the gossip keys alone too: derived
// from that secret, they would cut this node off from the others' gossip
// while its Raft connections, on the old secret, went on.
func (p *planeOptions) reload(c *planeCreds, cl gossipKeySetter) error {
	var errs []error
	secrets, err := p.secrets()
	if err == nil && c.secret != nil {
		err = c.secret.Update(secrets)
	}
	errs = append(errs, err)
	if c.files != nil {
		errs = append(errs, c.files.Reload())
	}
	if len(c.gossipKeys) > 0 && err == nil {
		keys, err := p.gossipKeys(secrets)
		if err == nil {
			err = cl.SetGossipKeys(keys)
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// secrets returns the cluster secrets: the file's lines (blank lines
// ignored), or GOBLIN_CLUSTER_SECRET.
func (p *planeOptions) secrets() ([][]byte, error) {
	if p.secretFile == "" {
		if !p.secretsGiven {
			return nil, nil
		}
		return [][]byte{[]byte(strings.TrimSpace(p.secretsEnv))}, nil
	}
	b, err := os.ReadFile(p.secretFile)
	if err != nil {
		return nil, fmt.Errorf("--cluster-secret-file: %w", err)
	}
	var out [][]byte
	for _, line := range bytes.Split(b, []byte("\n")) {
		if line = bytes.TrimSpace(line); len(line) > 0 {
			out = append(out, line)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--cluster-secret-file %s is empty", p.secretFile)
	}
	return out, nil
}

// gossipKeys returns the gossip keys: from --gossip-key-file or
// GOBLIN_GOSSIP_KEY, else derived from the cluster secrets.
func (p *planeOptions) gossipKeys(secrets [][]byte) ([][]byte, error) {
	var lines []string
	switch {
	case p.gossipKeyFile != "":
		b, err := os.ReadFile(p.gossipKeyFile)
		if err != nil {
			return nil, fmt.Errorf("--gossip-key-file: %w", err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				lines = append(lines, l)
			}
		}
		if len(lines) == 0 {
			return nil, fmt.Errorf("--gossip-key-file %s is empty", p.gossipKeyFile)
		}
	case p.gossipKeyGiven:
		lines = []string{strings.TrimSpace(p.gossipKeyEnv)}
	default:
		var keys [][]byte
		for _, s := range secrets {
			k, err := cluster.GossipKeyFromSecret(s)
			if err != nil {
				return nil, err
			}
			keys = append(keys, k)
		}
		return keys, nil
	}
	var keys [][]byte
	for _, l := range lines {
		k, err := base64.StdEncoding.DecodeString(l)
		if err != nil {
			return nil, fmt.Errorf("gossip key: not base64: %w", err)
		}
		if n := len(k); n != 16 && n != 24 && n != 32 {
			return nil, fmt.Errorf("gossip key: %d bytes; want 16, 24 or 32 (for example: openssl rand -base64 32)", n)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// isLoopback reports whether addr (host:port) names a loopback address.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// watch reloads the cluster's certificate files when they change, as the
// client TLS files are (every --tls-watch-interval); the returned function
// stops it.
func (c *planeCreds) watch(every time.Duration, logger hclog.Logger) func() {
	if c.files == nil || every <= 0 {
		return func() {}
	}
	c.files.OnReload(func() {
		logger.Info("cluster TLS certificates reloaded", "serial", fmt.Sprintf("%x", c.files.Leaf().SerialNumber))
	})
	ctx, stop := context.WithCancel(context.Background())
	go c.files.Watch(ctx, every, func(err error) {
		logger.Error("cluster TLS files changed but cannot be loaded; the certificates in use stay", "error", err)
	})
	return stop
}
