package tlsconf

import (
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestIssue(t *testing.T) {
	ca, err := NewCA("test CA", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !ca.Cert.IsCA || ca.Cert.NotAfter.Sub(ca.Cert.NotBefore) < CAValidity {
		t.Fatalf("CA certificate: IsCA %v, valid %v", ca.Cert.IsCA, ca.Cert.NotAfter.Sub(ca.Cert.NotBefore))
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	for _, tc := range []struct {
		usage Usage
		want  []x509.ExtKeyUsage
	}{
		{0, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}},
		{ServerAuth, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}},
		{ClientAuth, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}},
	} {
		l, err := ca.Issue(LeafSpec{Name: "n1", Hosts: []string{"10.0.0.1", "n1.example", " ", "::1"}, Usage: tc.usage, ValidFor: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(l.Cert.ExtKeyUsage, tc.want) {
			t.Errorf("usage %d: ExtKeyUsage %v, want %v", tc.usage, l.Cert.ExtKeyUsage, tc.want)
		}
		if !slices.Equal(l.Cert.DNSNames, []string{"n1.example"}) || len(l.Cert.IPAddresses) != 2 ||
			!l.Cert.IPAddresses[0].Equal(net.ParseIP("10.0.0.1")) || !l.Cert.IPAddresses[1].Equal(net.ParseIP("::1")) {
			t.Errorf("names %v %v", l.Cert.DNSNames, l.Cert.IPAddresses)
		}
		if l.Cert.IsCA || l.Cert.Subject.CommonName != "n1" {
			t.Errorf("leaf IsCA %v, name %q", l.Cert.IsCA, l.Cert.Subject.CommonName)
		}
		if _, err := l.Cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: "10.0.0.1", KeyUsages: tc.want}); err != nil {
			t.Errorf("usage %d: %v", tc.usage, err)
		}
	}
	if _, err := ca.Issue(LeafSpec{}); err == nil {
		t.Error("Issue without a name succeeded")
	}
}

func TestCAFilesRoundTrip(t *testing.T) {
	dir := t.TempDir()
	ca, err := NewCA("round trip", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	crt, key := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key")
	if err := ca.WriteFiles(crt, key); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{crt: 0o644, key: 0o600} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}
	back, err := LoadCA(crt, key)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Cert.Equal(ca.Cert) {
		t.Fatal("LoadCA returned another certificate")
	}
	// A leaf is not a CA.
	set := writeSet(t, "leaf")
	if _, err := LoadCA(set["leaf"].Cert, set["leaf"].Key); err == nil {
		t.Fatal("LoadCA accepted a leaf certificate")
	}
	// Nothing but the two files is left in the directory.
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Fatalf("directory holds %d entries, want 2", len(ents))
	}
}

func TestParseUsage(t *testing.T) {
	for s, want := range map[string]Usage{"server": ServerAuth, "client": ClientAuth, "both": BothAuth} {
		if u, err := ParseUsage(s); err != nil || u != want {
			t.Errorf("ParseUsage(%q) = %v, %v", s, u, err)
		}
	}
	if _, err := ParseUsage("peer"); err == nil {
		t.Error("ParseUsage accepted peer")
	}
}
