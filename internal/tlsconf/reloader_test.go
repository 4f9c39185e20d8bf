package tlsconf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var localHosts = []string{"127.0.0.1", "localhost"}

func writeSet(t *testing.T, names ...string) map[string]Files {
	t.Helper()
	fs, err := WriteSet(t.TempDir(), localHosts, names...)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func mustLoad(t *testing.T, f Files) *Reloader {
	t.Helper()
	r, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestLoad(t *testing.T) {
	f := writeSet(t, "server")["server"]
	r := mustLoad(t, f)
	if r.Leaf() == nil || r.Leaf().Subject.CommonName != "server" {
		t.Fatalf("Leaf = %v", r.Leaf())
	}
	if r.Files() != f {
		t.Fatalf("Files = %+v, want %+v", r.Files(), f)
	}
	// No certificate at all: a client that presents none.
	r = mustLoad(t, Files{CA: f.CA})
	if r.Leaf() != nil {
		t.Fatalf("Leaf without a certificate file = %v", r.Leaf())
	}
}

// TestLoadErrors checks that each error names the file at fault and what
// is wrong with it.
func TestLoadErrors(t *testing.T) {
	set := writeSet(t, "a", "b")
	a, b := set["a"], set["b"]
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	keyPEM, err := os.ReadFile(a.Key)
	if err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.crt")
	garbage := write("garbage.pem", "not a PEM file\n")
	badCert := write("bad.crt", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
	encrypted := write("enc.key", "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n")
	badKey := write("bad.key", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
	for _, tc := range []struct {
		name string
		f    Files
		want []string
	}{
		{"missing cert", Files{Cert: missing, Key: a.Key}, []string{"certificate file " + missing, "no such file"}},
		{"missing key", Files{Cert: a.Cert, Key: missing}, []string{"key file " + missing, "no such file"}},
		{"missing CA", Files{Cert: a.Cert, Key: a.Key, CA: missing}, []string{"CA file " + missing, "no such file"}},
		{"cert not PEM", Files{Cert: garbage, Key: a.Key}, []string{"certificate file " + garbage, "no PEM certificate"}},
		{"cert is a key", Files{Cert: a.Key, Key: a.Key}, []string{"certificate file " + a.Key, "no PEM certificate"}},
		{"cert corrupt", Files{Cert: badCert, Key: a.Key}, []string{"certificate file " + badCert, "certificate 1"}},
		{"key not PEM", Files{Cert: a.Cert, Key: garbage}, []string{"key file " + garbage, "no PEM private key"}},
		{"key is a cert", Files{Cert: a.Cert, Key: a.Cert}, []string{"key file " + a.Cert, "no PEM private key"}},
		{"key corrupt", Files{Cert: a.Cert, Key: badKey}, []string{"key file " + badKey}},
		{"key encrypted", Files{Cert: a.Cert, Key: encrypted}, []string{"key file " + encrypted, "encrypted"}},
		{"key of another cert", Files{Cert: a.Cert, Key: b.Key}, []string{"key file " + b.Key, "certificate file " + a.Cert, "private key"}},
		{"CA not PEM", Files{Cert: a.Cert, Key: a.Key, CA: garbage}, []string{"CA file " + garbage, "no PEM certificate"}},
		{"CA is a key", Files{CA: write("k.pem", string(keyPEM))}, []string{"CA file", "no PEM certificate"}},
		{"cert without key", Files{Cert: a.Cert}, []string{"certificate file " + a.Cert, "without a key file"}},
		{"key without cert", Files{Key: a.Key}, []string{"key file " + a.Key, "without a certificate file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(tc.f)
			if err == nil {
				t.Fatal("Load succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Count(err.Error(), dir) > 1 {
				t.Errorf("error %q names a file twice", err)
			}
		})
	}
}

// TestLoadChainAndCombined reads a certificate file that holds a chain and
// its key in the same file, as some tools write them.
func TestLoadChainAndCombined(t *testing.T) {
	f := writeSet(t, "server")["server"]
	cert, _ := os.ReadFile(f.Cert)
	key, _ := os.ReadFile(f.Key)
	ca, _ := os.ReadFile(f.CA)
	combined := filepath.Join(t.TempDir(), "all.pem")
	if err := os.WriteFile(combined, append(append(append([]byte{}, key...), cert...), ca...), 0o600); err != nil {
		t.Fatal(err)
	}
	r := mustLoad(t, Files{Cert: combined, Key: combined})
	if r.Leaf().Subject.CommonName != "server" {
		t.Fatalf("leaf = %s, want the first certificate", r.Leaf().Subject)
	}
	if n := len(r.cur.Load().cert.Certificate); n != 2 {
		t.Fatalf("chain has %d certificates, want 2", n)
	}
}

func TestReloadKeepsMaterialOnError(t *testing.T) {
	dir := t.TempDir()
	set, err := WriteSet(dir, localHosts, "server")
	if err != nil {
		t.Fatal(err)
	}
	f := set["server"]
	r := mustLoad(t, f)
	reloads := 0
	r.OnReload(func() { reloads++ })
	old := r.Leaf()
	if err := os.WriteFile(f.Cert, []byte("truncated"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = r.Reload()
	if err == nil || !strings.Contains(err.Error(), f.Cert) {
		t.Fatalf("Reload of a broken file = %v, want an error naming %s", err, f.Cert)
	}
	if r.Leaf() != old || reloads != 0 {
		t.Fatalf("a failed reload changed the material (reloads %d)", reloads)
	}
	ca, err := LoadCA(f.CA, filepath.Join(dir, "ca.key"))
	if err != nil {
		t.Fatal(err)
	}
	issue(t, ca, "server2", f)
	if err := r.Reload(); err != nil {
		t.Fatal(err)
	}
	if r.Leaf().Subject.CommonName != "server2" || reloads != 1 {
		t.Fatalf("after Reload: leaf %s, reloads %d", r.Leaf().Subject, reloads)
	}
}

// issue writes a new leaf named name over f's certificate and key.
func issue(t *testing.T, ca *CA, name string, f Files) *Leaf {
	t.Helper()
	l, err := ca.Issue(LeafSpec{Name: name, Hosts: localHosts})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.WriteFiles(f.Cert, f.Key); err != nil {
		t.Fatal(err)
	}
	return l
}
