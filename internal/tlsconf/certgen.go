package tlsconf

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/goblindb/goblin/internal/durable"
)

// Usage says what a leaf certificate may be used for (extended key
// usage).
type Usage uint8

const (
	ServerAuth Usage = 1 << iota // accepts TLS connections
	ClientAuth                   // dials TLS connections with a certificate
	BothAuth   = ServerAuth | ClientAuth
)

// ParseUsage reads "server", "client" or "both".
func ParseUsage(s string) (Usage, error) {
	switch s {
	case "server":
		return ServerAuth, nil
	case "client":
		return ClientAuth, nil
	case "both":
		return BothAuth, nil
	}
	return 0, fmt.Errorf("unknown certificate usage %q (want server, client or both)", s)
}

// Default validity periods.
const (
	CAValidity   = 10 * 365 * 24 * time.Hour
	LeafValidity = 365 * 24 * time.Hour
	// backdate starts a certificate's validity before its creation, for
	// clocks a little behind.
	backdate = time.Hour
)

// CA is a certificate authority: a self-signed certificate and its key.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// NewCA makes a certificate authority named name, valid for validFor
// (CAValidity when 0).
func NewCA(name string, validFor time.Duration) (*CA, error) {
	if validFor <= 0 {
		validFor = CAValidity
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl, err := template(name, validFor)
	if err != nil {
		return nil, err
	}
	tmpl.IsCA = true
	tmpl.BasicConstraintsValid = true
	tmpl.MaxPathLenZero = true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, Key: key}, nil
}

// LoadCA reads a certificate authority written by WriteFiles (or any CA
// certificate and its unencrypted key).
func LoadCA(certFile, keyFile string) (*CA, error) {
	pair, err := readPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	if !pair.Leaf.IsCA {
		return nil, fmt.Errorf("certificate file %s: not a CA certificate", certFile)
	}
	return &CA{Cert: pair.Leaf, Key: pair.PrivateKey.(crypto.Signer)}, nil
}

// WriteFiles writes the CA's certificate and key as PEM files.
func (ca *CA) WriteFiles(certFile, keyFile string) error {
	return writePair(ca.Cert, ca.Key, certFile, keyFile)
}

// CertPEM returns the CA certificate in PEM form.
func (ca *CA) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})
}

// LeafSpec describes a certificate to issue.
type LeafSpec struct {
	Name string // subject common name
	// Hosts are the DNS names and IP addresses the certificate is valid
	// for (a peer checking the host name compares against these).
	Hosts    []string
	Usage    Usage         // BothAuth when 0
	ValidFor time.Duration // LeafValidity when 0
}

// Leaf is an issued certificate and its key.
type Leaf struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// Issue makes a leaf certificate signed by the CA.
func (ca *CA) Issue(spec LeafSpec) (*Leaf, error) {
	if spec.Name == "" {
		return nil, errors.New("a certificate needs a name")
	}
	if spec.ValidFor <= 0 {
		spec.ValidFor = LeafValidity
	}
	if spec.Usage == 0 {
		spec.Usage = BothAuth
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl, err := template(spec.Name, spec.ValidFor)
	if err != nil {
		return nil, err
	}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	if spec.Usage&ServerAuth != 0 {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	if spec.Usage&ClientAuth != 0 {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	for _, h := range spec.Hosts {
		h = strings.TrimSpace(h)
		switch ip := net.ParseIP(h); {
		case h == "":
		case ip != nil:
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		default:
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &Leaf{Cert: cert, Key: key}, nil
}

// WriteFiles writes the leaf's certificate and key as PEM files.
func (l *Leaf) WriteFiles(certFile, keyFile string) error {
	return writePair(l.Cert, l.Key, certFile, keyFile)
}

// template returns a certificate template with a random serial number.
func template(name string, validFor time.Duration) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	return &x509.Certificate{
		SerialNumber: serial.Add(serial, big.NewInt(1)), // positive
		Subject:      pkix.Name{CommonName: name, Organization: []string{"Goblin"}},
		NotBefore:    now.Add(-backdate),
		NotAfter:     now.Add(validFor),
	}, nil
}

// writePair writes a certificate (mode 0644) and its key (PKCS #8, mode
// 0600).
func writePair(cert *x509.Certificate, key crypto.Signer, certFile, keyFile string) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	if err := WriteFileAtomic(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return err
	}
	return WriteFileAtomic(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}), 0o644)
}

// WriteFileAtomic writes data to path through a temporary file renamed
// over it: a reader sees the old file or the new one, whole.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	return durable.ReplaceFile(path, data, perm)
}

// WriteSet makes a new CA in dir (ca.crt, ca.key) and, for each name, a
// leaf certificate for both server and client use, valid for hosts
// (NAME.crt, NAME.key). It returns each name's Files, with the CA. Tests
// use it: WriteSet(t.TempDir(), []string{"127.0.0.1", "localhost"},
// "server", "client").
func WriteSet(dir string, hosts []string, names ...string) (map[string]Files, error) {
	ca, err := NewCA("Goblin test CA", 0)
	if err != nil {
		return nil, err
	}
	caFile := filepath.Join(dir, "ca.crt")
	if err := ca.WriteFiles(caFile, filepath.Join(dir, "ca.key")); err != nil {
		return nil, err
	}
	out := make(map[string]Files, len(names))
	for _, n := range names {
		l, err := ca.Issue(LeafSpec{Name: n, Hosts: hosts})
		if err != nil {
			return nil, err
		}
		f := Files{Cert: filepath.Join(dir, n+".crt"), Key: filepath.Join(dir, n+".key"), CA: caFile}
		if err := l.WriteFiles(f.Cert, f.Key); err != nil {
			return nil, err
		}
		out[n] = f
	}
	return out, nil
}
