package main

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/goblindb/goblin/internal/tlsconf"
	"github.com/goblindb/goblin/resp"
)

// TestTLSFlags checks the TLS flags' validation and what they configure.
func TestTLSFlags(t *testing.T) {
	set, err := tlsconf.WriteSet(t.TempDir(), []string{"127.0.0.1"}, "n1")
	if err != nil {
		t.Fatal(err)
	}
	f := set["n1"]
	files := []string{"--tls-cert-file", f.Cert, "--tls-key-file", f.Key}
	logger := hclog.NewNullLogger()
	load := func(args ...string) (*clientTLS, error) {
		o, err := parseFlags(append([]string{"--addr", "127.0.0.1:6379"}, args...))
		if err != nil {
			return nil, err
		}
		c, err := loadClientTLS(o, logger)
		t.Cleanup(c.Close)
		return c, err
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tls-only"}, "--tls-only needs --tls-port"},
		{files, "need --tls-port"},
		{[]string{"--tls-port", "6380"}, "--tls-port needs --tls-cert-file and --tls-key-file"},
		{append([]string{"--tls-port", "6380"}, files...), "--tls-ca-cert-file is needed"},
		{append([]string{"--tls-port", "6380", "--tls-auth-clients", "optional"}, files...), "--tls-ca-cert-file is needed"},
		{append([]string{"--tls-port", "6380", "--tls-auth-clients", "maybe"}, files...), "yes, no or optional"},
		{append([]string{"--tls-port", "70000", "--tls-auth-clients", "no"}, files...), "not a port"},
		{append([]string{"--tls-port", "6380", "--tls-auth-clients", "no", "--tls-handshake-timeout", "0s"}, files...), "must be positive"},
		{[]string{"--tls-port", "6380", "--tls-auth-clients", "no", "--tls-cert-file", f.CA, "--tls-key-file", f.Key}, "key file " + f.Key},
	} {
		if _, err := load(tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one about %q", tc.args, err, tc.want)
		}
	}

	// No TLS: CONFIG GET answers Redis's defaults.
	c, err := load()
	if err != nil || c != nil {
		t.Fatalf("without TLS flags: %v, %v", c, err)
	}
	cfg := c.config(resp.Config{Addr: "127.0.0.1:6379"})
	if cfg.TLSAddr != "" || cfg.Settings["tls-auth-clients"] != "yes" || cfg.Settings["tls-cert-file"] != "" {
		t.Fatalf("without TLS: %+v", cfg)
	}

	for _, tc := range []struct {
		auth string
		want tls.ClientAuthType
		only bool
	}{
		{"yes", tls.RequireAndVerifyClientCert, false},
		{"optional", tls.VerifyClientCertIfGiven, true},
		{"no", tls.NoClientCert, false},
	} {
		args := append([]string{"--tls-port", "6380", "--tls-ca-cert-file", f.CA, "--tls-auth-clients", tc.auth}, files...)
		if tc.only {
			args = append(args, "--tls-only")
		}
		c, err := load(args...)
		if err != nil {
			t.Fatal(err)
		}
		if c.auth != tc.want {
			t.Errorf("--tls-auth-clients %s: policy %v, want %v", tc.auth, c.auth, tc.want)
		}
		cfg := c.config(resp.Config{Addr: "127.0.0.1:6379"})
		if cfg.TLSAddr != "127.0.0.1:6380" || cfg.TLS == nil || (cfg.Addr == "") != tc.only {
			t.Errorf("--tls-auth-clients %s: Addr %q TLSAddr %q", tc.auth, cfg.Addr, cfg.TLSAddr)
		}
		if cfg.Settings["tls-auth-clients"] != tc.auth || cfg.Settings["tls-cert-file"] != f.Cert || cfg.Settings["tls-ca-cert-file"] != f.CA {
			t.Errorf("settings %v", cfg.Settings)
		}
	}
}

func TestGencert(t *testing.T) {
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca")
	gen := func(args ...string) (int, string) {
		var out, errs strings.Builder
		code := gencertTo(args, &out, &errs)
		return code, out.String() + errs.String()
	}
	if code, out := gen("--ca-dir", ca); code != 0 || !strings.Contains(out, "a new CA") {
		t.Fatalf("making a CA: %d %s", code, out)
	}
	caCert, _ := os.ReadFile(filepath.Join(ca, "ca.crt"))
	if code, out := gen("--ca-dir", ca); code != 0 || !strings.Contains(out, "kept") {
		t.Fatalf("the CA again: %d %s", code, out)
	}
	if again, _ := os.ReadFile(filepath.Join(ca, "ca.crt")); string(again) != string(caCert) {
		t.Fatal("a second gencert --ca-dir replaced the CA")
	}
	out := filepath.Join(dir, "n1")
	if code, msg := gen("--ca-dir", ca, "--name", "n1", "--host", "10.0.0.1,n1.example", "--out", out); code != 0 {
		t.Fatalf("issuing n1: %d %s", code, msg)
	}
	n1 := tlsconf.Files{Cert: filepath.Join(out, "n1.crt"), Key: filepath.Join(out, "n1.key"), CA: filepath.Join(ca, "ca.crt")}
	rl, err := tlsconf.Load(n1)
	if err != nil {
		t.Fatal(err)
	}
	leaf := rl.Leaf()
	if len(leaf.DNSNames) != 1 || leaf.DNSNames[0] != "n1.example" || len(leaf.IPAddresses) != 1 || len(leaf.ExtKeyUsage) != 2 {
		t.Fatalf("n1: names %v %v usage %v", leaf.DNSNames, leaf.IPAddresses, leaf.ExtKeyUsage)
	}
	if err := leaf.CheckSignatureFrom(mustCA(t, ca).Cert); err != nil {
		t.Fatalf("n1 is not signed by the CA: %v", err)
	}
	if code, msg := gen("--ca-dir", ca, "--name", "n1", "--out", out); code == 0 || !strings.Contains(msg, "--force") {
		t.Fatalf("overwriting n1 without --force: %d %s", code, msg)
	}
	if code, msg := gen("--ca-dir", ca, "--name", "n1", "--out", out, "--force", "--usage", "client"); code != 0 {
		t.Fatalf("--force: %d %s", code, msg)
	}
	for _, args := range [][]string{
		{},
		{"--ca-dir", ca, "--host", "x"},
		{"--ca-dir", ca, "--name", "../x"},
		{"--ca-dir", ca, "--name", "ca"},
		{"--ca-dir", ca, "--name", "x", "--usage", "peer"},
		{"--ca-dir", ca, "--name", "x", "--days", "0"},
		{"--ca-dir", ca, "extra"},
	} {
		if code, _ := gen(args...); code == 0 {
			t.Errorf("gencert %q succeeded", args)
		}
	}
	// Half a CA is refused, not replaced.
	os.Remove(filepath.Join(ca, "ca.key"))
	if code, msg := gen("--ca-dir", ca, "--name", "y"); code == 0 || !strings.Contains(msg, "not both") {
		t.Fatalf("half a CA: %d %s", code, msg)
	}
}

func mustCA(t *testing.T, dir string) *tlsconf.CA {
	t.Helper()
	ca, err := tlsconf.LoadCA(filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key"))
	if err != nil {
		t.Fatal(err)
	}
	return ca
}
