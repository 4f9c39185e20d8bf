package metrics

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Config configures the endpoint.
type Config struct {
	// Addr is the HOST:PORT to listen on.
	Addr string
	// TLS, when set, serves HTTPS with it. Which addresses may serve
	// plain HTTP is the caller's decision (goblind: loopback only, unless
	// told otherwise).
	TLS *tls.Config
}

// Server serves /metrics.
type Server struct {
	ln  net.Listener
	srv *http.Server
}

// Listen opens the endpoint's listener for collector c, with Go runtime
// and process metrics (go_*, process_*) beside Goblin's.
func Listen(cfg Config, c prometheus.Collector) (*Server, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(c, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	if cfg.TLS != nil {
		ln = tls.NewListener(ln, cfg.TLS)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	return &Server{ln: ln, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}, nil
}

// Addr returns the address the endpoint listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Serve serves until Close; errors other than closing go to onErr.
func (s *Server) Serve(onErr func(error)) {
	go func() {
		if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			onErr(err)
		}
	}()
}

// Close stops the endpoint.
func (s *Server) Close() error { return s.srv.Close() }
