package main

import (
	"flag"
	"fmt"
	"io"
	"net"

	"github.com/hashicorp/go-hclog"

	"github.com/goblindb/goblin/internal/logthrottle"
	"github.com/goblindb/goblin/metrics"
	"github.com/goblindb/goblin/node"
	"github.com/goblindb/goblin/resp"
)

// observabilityOptions are the flags of logs and metrics.
type observabilityOptions struct {
	logLevel, logFormat string
	metricsAddr         string
	metricsAllowRemote  bool
}

func (o *observabilityOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&o.logLevel, "log-level", "info", "log level: "+logLevels)
	fs.StringVar(&o.logFormat, "log-format", "text", "log format: text, or json (one JSON object a line, with the same fields)")
	fs.StringVar(&o.metricsAddr, "metrics-addr", "", "serve Prometheus metrics on http://HOST:PORT/metrics (off by default; loopback only, or HTTPS with the client TLS certificates when --tls-port is set, unless --metrics-allow-remote)")
	fs.BoolVar(&o.metricsAllowRemote, "metrics-allow-remote", false, "allow --metrics-addr off loopback in plain HTTP, without authentication")
}

// logLevels are the levels --log-level takes: hclog's
// (hclog.LevelFromString, which also takes them in capitals).
const logLevels = "trace, debug, info, warn, error or off"

// check refuses a log level or format it does not know, and a metrics
// endpoint that would serve plain HTTP off loopback without
// --metrics-allow-remote; clientTLS says whether client TLS is
// configured (--tls-port), which serves the endpoint over HTTPS.
func (o *observabilityOptions) check(clientTLS bool) error {
	if hclog.LevelFromString(o.logLevel) == hclog.NoLevel {
		return fmt.Errorf("--log-level must be %s, not %q", logLevels, o.logLevel)
	}
	if o.logFormat != "text" && o.logFormat != "json" {
		return fmt.Errorf("--log-format must be text or json, not %q", o.logFormat)
	}
	if o.metricsAddr != "" && !clientTLS && !o.metricsAllowRemote && !isLoopback(o.metricsAddr) {
		return fmt.Errorf("--metrics-addr %s is not a loopback address and the endpoint has no authentication: "+
			"bind it to 127.0.0.1, set --tls-port (it is then served over TLS with the client certificates), or pass --metrics-allow-remote", o.metricsAddr)
	}
	return nil
}

// logger returns goblind's logger, writing to w. At info and above, at
// most logthrottle.Burst lines of one kind in logthrottle.Window reach w:
// some lines are written as often as anyone who reaches a port wants
// (junk on the gossip port, a dead peer beaten several times a second),
// and the log must not fill the disk. At debug and trace, asked for,
// every line is written.
func (o *observabilityOptions) logger(w io.Writer) hclog.Logger {
	json := o.logFormat == "json"
	level := hclog.LevelFromString(o.logLevel)
	if level > hclog.Debug {
		w = logthrottle.New(w, json)
	}
	return hclog.New(&hclog.LoggerOptions{Name: "goblind", Level: level, Output: w, JSONFormat: json})
}

// serveMetrics starts the metrics endpoint if --metrics-addr is set; the
// returned function stops it. With client TLS configured the endpoint
// uses the client port's certificates and client-certificate checks, on
// any address; without, plain HTTP, which check allows off loopback only
// with --metrics-allow-remote.
func (o *observabilityOptions) serveMetrics(srv *resp.Server, n *node.Node, ctls *clientTLS, logger hclog.Logger) (func(), error) {
	if o.metricsAddr == "" {
		return func() {}, nil
	}
	cfg := metrics.Config{Addr: o.metricsAddr}
	if ctls != nil {
		cfg.TLS = ctls.rl.ServerConfig(ctls.auth)
	}
	if err := o.check(cfg.TLS != nil); err != nil {
		return nil, err // parseFlags refused it already
	}
	ms, err := metrics.Listen(cfg, metrics.NewCollector(srv, n, version))
	if err != nil {
		return nil, err
	}
	ms.Serve(func(err error) { logger.Error("metrics endpoint failed", "error", err) })
	scheme := "http"
	if cfg.TLS != nil {
		scheme = "https"
	}
	logger.Info("serving metrics", "url", scheme+"://"+ms.Addr().String()+"/metrics")
	return func() { ms.Close() }, nil
}

// addrText is a listener's address as a log value: a string in both log
// formats (JSON would otherwise spell a net.Addr out as an object), "" for
// none.
func addrText(a net.Addr) string {
	if a == nil {
		return ""
	}
	return a.String()
}
