package tlsconf

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"sync/atomic"
)

// Files names the PEM files of one TLS identity. Cert and Key go
// together: both or neither (a client that presents no certificate). CA
// may be empty: peers are then verified against the system's roots.
type Files struct{ Cert, Key, CA string }

// Reloader holds the current certificate, key and CA pool read from Files
// and hands out tls.Configs that use whatever is current at each
// handshake. Its methods are safe for concurrent use.
type Reloader struct {
	files Files
	cur   atomic.Pointer[material]
	mu    sync.Mutex // serializes reloads
	hook  atomic.Pointer[func()]
}

// material is one consistent reading of the files.
type material struct {
	cert   *tls.Certificate  // nil when Files has no certificate
	pool   *x509.CertPool    // nil: the system's roots
	stamps [3]stamp          // of Cert, Key, CA, taken before reading them
	leaf   *x509.Certificate // cert's first certificate
}

// Load reads f. The error names the file at fault and what is wrong.
func Load(f Files) (*Reloader, error) {
	r := &Reloader{files: f}
	m, err := read(f)
	if err != nil {
		return nil, err
	}
	r.cur.Store(m)
	return r, nil
}

// Reload reads the files again. On error the material in use stays.
func (r *Reloader) Reload() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	m, err := read(r.files)
	if err != nil {
		return err
	}
	r.cur.Store(m)
	if fn := r.hook.Load(); fn != nil {
		(*fn)()
	}
	return nil
}

// OnReload makes fn run after every successful Reload, whether Watch or a
// caller asked for it (a log line, say). fn must not call Reload.
func (r *Reloader) OnReload(fn func()) { r.hook.Store(&fn) }

// Files returns the files the Reloader reads.
func (r *Reloader) Files() Files { return r.files }

// Leaf returns the current certificate (the first of the certificate
// file), or nil when there is none.
func (r *Reloader) Leaf() *x509.Certificate { return r.cur.Load().leaf }

// read loads one consistent set of material from f. Each file is stat'ed
// before it is read: a change made while reading shows at the next Watch.
func read(f Files) (*material, error) {
	if (f.Cert == "") != (f.Key == "") {
		if f.Cert == "" {
			return nil, fmt.Errorf("key file %s given without a certificate file", f.Key)
		}
		return nil, fmt.Errorf("certificate file %s given without a key file", f.Cert)
	}
	m := &material{}
	var err error
	for i, p := range []string{f.Cert, f.Key, f.CA} {
		if p == "" {
			continue
		}
		if m.stamps[i], err = statFile(p); err != nil {
			return nil, fileError(kindOf[i], p, err)
		}
	}
	if f.Cert != "" {
		if m.cert, err = readPair(f.Cert, f.Key); err != nil {
			return nil, err
		}
		m.leaf = m.cert.Leaf
	}
	if f.CA != "" {
		if m.pool, err = readPool(f.CA); err != nil {
			return nil, err
		}
	}
	return m, nil
}

var kindOf = [3]string{"certificate file", "key file", "CA file"}

// fileError names the file and its fault; an os error's own copy of the
// path is left out.
func fileError(kind, path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("%s %s: %w", kind, path, err)
}

// readCerts parses every CERTIFICATE block of a PEM file.
func readCerts(kind, path string) ([]*x509.Certificate, [][]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fileError(kind, path, err)
	}
	var certs []*x509.Certificate
	var ders [][]byte
	for n := 1; ; {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, nil, fileError(kind, path, fmt.Errorf("certificate %d: %w", n, err))
		}
		certs = append(certs, c)
		ders = append(ders, b.Bytes)
		n++
	}
	if len(certs) == 0 {
		return nil, nil, fileError(kind, path, errors.New("no PEM certificate (BEGIN CERTIFICATE) found"))
	}
	return certs, ders, nil
}

// readPair reads a certificate chain and its private key, and checks that
// they belong together.
func readPair(certPath, keyPath string) (*tls.Certificate, error) {
	certs, ders, err := readCerts("certificate file", certPath)
	if err != nil {
		return nil, err
	}
	key, err := readKey(keyPath)
	if err != nil {
		return nil, err
	}
	pub, ok := certs[0].PublicKey.(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(key.Public()) {
		return nil, fmt.Errorf("key file %s does not hold the private key of certificate file %s", keyPath, certPath)
	}
	return &tls.Certificate{Certificate: ders, PrivateKey: key, Leaf: certs[0]}, nil
}

// readKey reads the first private key of a PEM file: PKCS #8, PKCS #1
// (RSA) or SEC 1 (EC), unencrypted.
func readKey(path string) (crypto.Signer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fileError("key file", path, err)
	}
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return nil, fileError("key file", path, errors.New("no PEM private key (BEGIN PRIVATE KEY) found"))
		}
		if !strings.HasSuffix(b.Type, "PRIVATE KEY") {
			continue
		}
		if b.Type == "ENCRYPTED PRIVATE KEY" || b.Headers["Proc-Type"] != "" {
			return nil, fileError("key file", path, errors.New("the private key is encrypted; give an unencrypted key"))
		}
		var k any
		switch b.Type {
		case "RSA PRIVATE KEY":
			k, err = x509.ParsePKCS1PrivateKey(b.Bytes)
		case "EC PRIVATE KEY":
			k, err = x509.ParseECPrivateKey(b.Bytes)
		default:
			k, err = x509.ParsePKCS8PrivateKey(b.Bytes)
		}
		if err != nil {
			return nil, fileError("key file", path, err)
		}
		switch k := k.(type) {
		case *rsa.PrivateKey:
			return k, nil
		case *ecdsa.PrivateKey:
			return k, nil
		case ed25519.PrivateKey:
			return k, nil
		default:
			return nil, fileError("key file", path, fmt.Errorf("unsupported private key type %T", k))
		}
	}
}

// readPool reads a CA bundle.
func readPool(path string) (*x509.CertPool, error) {
	certs, _, err := readCerts("CA file", path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, nil
}
