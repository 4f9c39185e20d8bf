// Package tlsconf loads the certificates of Goblin's TLS ports and keeps
// them current, and makes certificates for tests and small deployments.
//
// # Loading and reloading
//
// Load reads a certificate, its private key and optionally a CA bundle,
// all PEM files, into a Reloader. Every error names the file and what is
// wrong with it. Reload reads the files again; if anything is wrong the
// Reloader keeps the material it had, so a half-done certificate rotation
// never leaves a port without a certificate. Watch reloads when a file's
// modification time, size or inode changes (a rename over the file, as
// atomic writers and Kubernetes secret mounts do, changes the inode).
//
// The tls.Config values a Reloader hands out never hold the material
// themselves: they read the current material at every handshake.
// ServerConfig answers each ClientHello with a config built from the
// current certificate and CA pool (GetConfigForClient); ClientConfig
// presents the current certificate (GetClientCertificate) and verifies the
// server's chain against the current CA pool (VerifyConnection). So a
// reload takes effect at the next handshake, and connections already
// established keep the keys they negotiated: nothing is dropped.
//
// Server configs disable session tickets: a resumed session skips the
// certificate checks, and a reload that changes the CA must apply to every
// connection made after it. Goblin's clients hold long-lived connections,
// so resumption would save little.
//
// Both sides require TLS 1.2 or later.
//
// # Certificates
//
// certgen.go makes an ECDSA P-256 certificate authority and leaf
// certificates signed by it, for server use, client use or both (a
// cluster node is both: it accepts and dials), valid for given DNS names
// and IP addresses. Tests use it so that no certificate lives in the
// repository; `goblind gencert` exposes it to users. Files are written
// atomically (a temporary file renamed over the target), so a Watch never
// reads half a file.
package tlsconf
