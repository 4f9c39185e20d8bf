// Package metrics exposes a node's measurements to Prometheus on
// goblind's --metrics-addr, under /metrics.
//
// Nothing here sits on a command's path. The counters live where the
// events happen, as plain atomics: the RESP edge counts each command's
// calls, failures, refusals and latency (a lock-free histogram,
// internal/hist) through a pointer the connection already holds, and the
// node counts log appends, fsyncs, snapshots, leader changes and forwarded
// writes. A scrape reads them all at once through one prometheus.Collector
// (collector.go) and turns them into constant metrics, so a scrape costs
// the hot path nothing and Prometheus sees one consistent reading. The
// keys and members per database are counted at scrape time, under the
// keyspace's read lock: O(keys) per scrape.
//
// Names follow Prometheus's conventions: the goblin_ prefix, base units
// (seconds, bytes), _total for counters. docs/observability.md lists every
// metric, the alerts worth setting and a Grafana dashboard.
//
// The endpoint has no authentication of its own (server.go). It serves
// HTTPS when given a TLS configuration; which addresses may serve plain
// HTTP is goblind's decision (loopback only, unless
// --metrics-allow-remote).
package metrics
