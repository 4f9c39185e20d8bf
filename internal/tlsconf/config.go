package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"sync/atomic"
)

// errNoCertificate refuses a handshake on a server config whose Files have
// no certificate.
var errNoCertificate = errors.New("tlsconf: no server certificate configured")

// ServerConfig returns a config for a TLS listener. Each handshake uses
// the current certificate, and verifies a client certificate against the
// current CA pool as auth asks (tls.RequireAndVerifyClientCert,
// tls.VerifyClientCertIfGiven, tls.NoClientCert, ...). A client
// certificate must allow client authentication (extended key usage).
func (r *Reloader) ServerConfig(auth tls.ClientAuthType) *tls.Config {
	// The per-material config is built once and kept while the material
	// stays current.
	type built struct {
		m   *material
		cfg *tls.Config
	}
	var last atomic.Pointer[built]
	return &tls.Config{
		MinVersion:             tls.VersionTLS12,
		SessionTicketsDisabled: true,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			m := r.cur.Load()
			if b := last.Load(); b != nil && b.m == m {
				return b.cfg, nil
			}
			if m.cert == nil {
				return nil, errNoCertificate
			}
			cfg := &tls.Config{
				MinVersion:             tls.VersionTLS12,
				SessionTicketsDisabled: true,
				Certificates:           []tls.Certificate{*m.cert},
				ClientAuth:             auth,
				ClientCAs:              m.pool,
			}
			last.Store(&built{m, cfg})
			return cfg, nil
		},
	}
}

// ClientConfig returns a config for dialing a TLS server. It presents the
// current certificate when the server asks for one, and verifies the
// server's chain against the current CA pool, for server use (extended
// key usage). serverName, when not empty, is sent as SNI (unless it is an
// IP address) and must match the server certificate's DNS names or IP
// addresses; "" checks the chain only, which suits peers that all hold
// certificates of a private CA.
func (r *Reloader) ClientConfig(serverName string) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		ServerName: serverName,
		// The chain is checked by VerifyConnection, against the CA pool
		// current at the handshake, instead of a pool fixed here.
		InsecureSkipVerify: true,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			if m := r.cur.Load(); m.cert != nil {
				return m.cert, nil
			}
			return &tls.Certificate{}, nil // none: the server decides
		},
		VerifyConnection: func(cs tls.ConnectionState) error {
			return verifyServer(r.cur.Load().pool, serverName, cs.PeerCertificates)
		},
	}
}

// verifyServer checks a server's chain as crypto/tls would with RootCAs
// set to pool.
func verifyServer(pool *x509.CertPool, serverName string, chain []*x509.Certificate) error {
	if len(chain) == 0 {
		return errors.New("tlsconf: the server sent no certificate")
	}
	opts := x509.VerifyOptions{
		Roots:         pool,
		Intermediates: x509.NewCertPool(),
		DNSName:       serverName,
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, c := range chain[1:] {
		opts.Intermediates.AddCert(c)
	}
	if _, err := chain[0].Verify(opts); err != nil {
		return fmt.Errorf("tlsconf: server certificate: %w", err)
	}
	return nil
}
