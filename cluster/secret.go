package cluster

import (
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"sync"
	"time"
)

// Credentials authenticate the node-to-node plane: every connection is
// mutual TLS, and a peer is admitted only when its certificate chains to
// the cluster's CA. The configurations are asked for at each handshake,
// so credentials that reload (new certificate files, a rotated secret)
// apply to new connections at once and leave established ones alone.
type Credentials interface {
	// ServerConfig is the configuration of accepted connections; it must
	// require and verify the peer's certificate.
	ServerConfig() *tls.Config
	// ClientConfig is the configuration of dialed connections; it must
	// present this node's certificate and verify the peer's.
	ClientConfig() *tls.Config
}

// MinSecretLen is the shortest cluster secret accepted. Anyone who can
// reach a node's plane learns the CA's public key, which is derived from
// the secret, and can guess secrets offline against it: a short secret
// would fall to a dictionary.
const MinSecretLen = 32

// SecretCredentials are Credentials derived from a shared cluster secret.
//
// The secret never travels. HKDF-SHA256 turns it into the seed of an
// Ed25519 key, the private key of a self-signed CA that every holder of
// the secret derives identically. Each process makes a fresh Ed25519 key
// of its own and a certificate for it signed by that CA; peers verify each
// other's certificate against the CA, exactly as with a CA from files. So
// only a holder of the secret can present an acceptable certificate, and
// TLS 1.3 keeps everything after the handshake confidential.
//
// Several secrets may be given for rotation: the first signs this node's
// certificate (and gives the gossip key), and certificates from every
// one of them are accepted. Rotating is then three rolling steps: add the
// new secret second everywhere, move it first everywhere, drop the old.
type SecretCredentials struct {
	id string

	mu   sync.RWMutex
	cert tls.Certificate
	pool *x509.CertPool
}

var _ Credentials = (*SecretCredentials)(nil)

// NewSecretCredentials derives credentials from secrets (the first is the
// current one) for the node named id (the certificate's common name, for
// logs and for operators reading a capture).
func NewSecretCredentials(id string, secrets [][]byte) (*SecretCredentials, error) {
	s := &SecretCredentials{id: id}
	if err := s.Update(secrets); err != nil {
		return nil, err
	}
	return s, nil
}

// Update replaces the secrets (a reload): new handshakes use them, and
// connections already made are kept.
func (s *SecretCredentials) Update(secrets [][]byte) error {
	if len(secrets) == 0 {
		return errors.New("cluster secret: none given")
	}
	pool := x509.NewCertPool()
	var signer ed25519.PrivateKey
	var caCert *x509.Certificate
	for i, secret := range secrets {
		if len(secret) < MinSecretLen {
			return fmt.Errorf("cluster secret: %d bytes is too short, at least %d are needed (for example: openssl rand -base64 32)", len(secret), MinSecretLen)
		}
		key, ca, err := secretCA(secret)
		if err != nil {
			return err
		}
		pool.AddCert(ca)
		if i == 0 {
			signer, caCert = key, ca
		}
	}
	cert, err := leafCert(s.id, signer, caCert)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.cert, s.pool = cert, pool
	s.mu.Unlock()
	return nil
}

func (s *SecretCredentials) current() (tls.Certificate, *x509.CertPool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.cert, s.pool
}

// ServerConfig implements Credentials.
func (s *SecretCredentials) ServerConfig() *tls.Config {
	cert, pool := s.current()
	return &tls.Config{
		MinVersion:            tls.VersionTLS13,
		Certificates:          []tls.Certificate{cert},
		ClientAuth:            tls.RequireAnyClientCert,
		VerifyPeerCertificate: verifyChain(pool, x509.ExtKeyUsageClientAuth),
	}
}

// ClientConfig implements Credentials. The peer is checked against the
// CA only, not against a host name: any holder of the secret is a node of
// this cluster, whatever address it has.
func (s *SecretCredentials) ClientConfig() *tls.Config {
	cert, pool := s.current()
	return &tls.Config{
		MinVersion:            tls.VersionTLS13,
		Certificates:          []tls.Certificate{cert},
		InsecureSkipVerify:    true, // replaced by verifyChain, without a host name
		VerifyPeerCertificate: verifyChain(pool, x509.ExtKeyUsageServerAuth),
	}
}

// verifyChain checks that the peer's certificate was signed by a CA in
// pool, for usage.
func verifyChain(pool *x509.CertPool, usage x509.ExtKeyUsage) func([][]byte, [][]*x509.Certificate) error {
	return func(raw [][]byte, _ [][]*x509.Certificate) error {
		if len(raw) == 0 {
			return errors.New("cluster: the peer presented no certificate")
		}
		leaf, err := x509.ParseCertificate(raw[0])
		if err != nil {
			return fmt.Errorf("cluster: the peer's certificate: %w", err)
		}
		inter := x509.NewCertPool()
		for _, r := range raw[1:] {
			if c, err := x509.ParseCertificate(r); err == nil {
				inter.AddCert(c)
			}
		}
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
			return fmt.Errorf("cluster: the peer's certificate is not from this cluster: %w", err)
		}
		return nil
	}
}

// Labels that separate the keys derived from one secret.
const (
	kdfSalt      = "goblin cluster secret v1"
	kdfCA        = "ca signing key"
	kdfGossipKey = "gossip key"
)

// secretCA derives the CA of secret: its key, and its certificate, the
// same bytes on every node (Ed25519 signatures are deterministic and every
// field is fixed).
func secretCA(secret []byte) (ed25519.PrivateKey, *x509.Certificate, error) {
	seed, err := hkdf.Key(sha256.New, secret, []byte(kdfSalt), kdfCA, ed25519.SeedSize)
	if err != nil {
		return nil, nil, err
	}
	key := ed25519.NewKeyFromSeed(seed)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "Goblin cluster CA (from the cluster secret)"},
		NotBefore:             time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC),
		NotAfter:              time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(nil, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, nil, fmt.Errorf("cluster secret: making the CA: %w", err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	return key, ca, nil
}

// leafCert makes this process's certificate: a fresh key, signed by the
// CA, for both ends of a connection.
func leafCert(id string, caKey ed25519.PrivateKey, ca *x509.Certificate) (tls.Certificate, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: id},
		NotBefore:    now.Add(-time.Hour), // peers' clocks may be behind
		NotAfter:     now.AddDate(20, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, pub, caKey)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("cluster secret: making this node's certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: priv}, nil
}

// GossipKeyFromSecret derives the 32-byte memberlist key (AES-256-GCM) of
// a cluster secret.
func GossipKeyFromSecret(secret []byte) ([]byte, error) {
	return hkdf.Key(sha256.New, secret, []byte(kdfSalt), kdfGossipKey, 32)
}
