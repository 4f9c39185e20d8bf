package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/goblindb/goblin/internal/tlsconf"
)

const gencertUsage = `usage:
  goblind gencert --ca-dir DIR
      make a certificate authority: DIR/ca.crt and DIR/ca.key (kept if present)
  goblind gencert --ca-dir DIR --name NAME [--host H1,H2] [--out DIR] [--usage both|server|client]
      issue NAME.crt and NAME.key, signed by the CA in --ca-dir (made first if absent)

flags:
`

// gencert is the certificate subcommand: a CA, then a certificate per node
// or client signed by it (tlsconf's generator).
func gencert(args []string) int {
	return gencertTo(args, os.Stdout, os.Stderr)
}

func gencertTo(args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("goblind gencert", flag.ContinueOnError)
	fset.SetOutput(stderr)
	caDir := fset.String("ca-dir", "", "directory of the CA's ca.crt and ca.key (required)")
	name := fset.String("name", "", "issue a certificate with this name (files NAME.crt, NAME.key)")
	hosts := fset.String("host", "", "comma-separated DNS names and IP addresses the certificate is valid for")
	out := fset.String("out", "", "directory for the issued certificate (default: --ca-dir)")
	usage := fset.String("usage", "both", "what the certificate is for: server (a TLS port), client (a client's certificate), both (a cluster node: it accepts and dials)")
	days := fset.Int("days", 365, "days the issued certificate is valid")
	caDays := fset.Int("ca-days", 3650, "days a new CA is valid")
	force := fset.Bool("force", false, "replace existing NAME.crt and NAME.key")
	fset.Usage = func() {
		fmt.Fprint(fset.Output(), gencertUsage)
		fset.PrintDefaults()
	}
	if err := parseArgs(fset, args, stdout); err != nil {
		return exitParse(err)
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "goblind gencert:", err)
		return 1
	}
	switch {
	case fset.NArg() > 0:
		return fail(fmt.Errorf("unexpected argument %q", fset.Arg(0)))
	case *caDir == "":
		return fail(errors.New("--ca-dir is required"))
	case *name == "" && (*hosts != "" || *out != ""):
		return fail(errors.New("--host and --out need --name"))
	case strings.ContainsAny(*name, `/\`) || *name == "." || *name == "..":
		return fail(fmt.Errorf("--name %q: a name, not a path", *name))
	case *name == "ca":
		return fail(errors.New(`--name ca would replace the CA's files`))
	case *days <= 0 || *caDays <= 0:
		return fail(errors.New("--days and --ca-days must be positive"))
	}
	u, err := tlsconf.ParseUsage(*usage)
	if err != nil {
		return fail(err)
	}
	ca, made, err := openCA(*caDir, time.Duration(*caDays)*24*time.Hour)
	if err != nil {
		return fail(err)
	}
	if made {
		fmt.Fprintf(stdout, "wrote %s and %s: a new CA, valid until %s; keep ca.key private\n",
			filepath.Join(*caDir, "ca.crt"), filepath.Join(*caDir, "ca.key"), ca.Cert.NotAfter.Format(time.DateOnly))
	} else if *name == "" {
		fmt.Fprintf(stdout, "%s already holds a CA (ca.crt, ca.key): kept\n", *caDir)
	}
	if *name == "" {
		return 0
	}
	if *out == "" {
		*out = *caDir
	}
	if err := os.MkdirAll(*out, 0o700); err != nil {
		return fail(err)
	}
	certFile, keyFile := filepath.Join(*out, *name+".crt"), filepath.Join(*out, *name+".key")
	if !*force {
		for _, p := range []string{certFile, keyFile} {
			if exists(p) {
				return fail(fmt.Errorf("%s exists (--force replaces it)", p))
			}
		}
	}
	l, err := ca.Issue(tlsconf.LeafSpec{Name: *name, Hosts: strings.Split(*hosts, ","), Usage: u,
		ValidFor: time.Duration(*days) * 24 * time.Hour})
	if err != nil {
		return fail(err)
	}
	if err := l.WriteFiles(certFile, keyFile); err != nil {
		return fail(err)
	}
	names := append([]string{}, l.Cert.DNSNames...)
	for _, ip := range l.Cert.IPAddresses {
		names = append(names, ip.String())
	}
	valid := "no host names"
	if len(names) > 0 {
		valid = strings.Join(names, ", ")
	}
	fmt.Fprintf(stdout, "wrote %s and %s: certificate %q for %s use, valid for %s until %s, serial %x\n",
		certFile, keyFile, *name, strings.Replace(*usage, "both", "server and client", 1), valid, l.Cert.NotAfter.Format(time.DateOnly), l.Cert.SerialNumber)
	return 0
}

// openCA loads the CA in dir, or makes one there (made) if dir has
// neither file.
func openCA(dir string, validFor time.Duration) (ca *tlsconf.CA, made bool, err error) {
	certFile, keyFile := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key")
	switch c, k := exists(certFile), exists(keyFile); {
	case c && k:
		ca, err = tlsconf.LoadCA(certFile, keyFile)
		return ca, false, err
	case c != k:
		return nil, false, fmt.Errorf("%s holds one of ca.crt and ca.key, not both", dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, false, err
	}
	if ca, err = tlsconf.NewCA("Goblin CA", validFor); err != nil {
		return nil, false, err
	}
	if err := ca.WriteFiles(certFile, keyFile); err != nil {
		return nil, false, err
	}
	return ca, true, nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return !errors.Is(err, fs.ErrNotExist)
}
