package drill

import (
	"errors"
	"strings"
)

// Outcome is what a client learned about an operation.
type Outcome uint8

const (
	// OK: the node answered with a result.
	OK Outcome = iota
	// Failed: the node answered with an error that says the command was
	// not applied, or the command was never sent.
	Failed
	// Unknown: no answer, or an error that leaves the outcome open. A
	// write with this outcome may or may not have been applied.
	Unknown
)

func (o Outcome) String() string {
	switch o {
	case OK:
		return "ok"
	case Failed:
		return "failed"
	}
	return "unknown"
}

// MarshalText writes the outcome as its name in the JSON report.
func (o Outcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// notApplied are the error codes that promise the command did not run:
// Redis clients retry them (TRYAGAIN, CLUSTERDOWN) or they refuse a
// command before it runs. A node that answers one of them for a write
// that later takes effect has lied, and the checker catches it. Every
// other error code, ERR included, leaves the outcome open.
var notApplied = map[string]bool{
	"TRYAGAIN":    true,
	"CLUSTERDOWN": true,
	"NOTLEADER":   true,
	"NOLEADER":    true,
	"MASTERDOWN":  true,
	"LOADING":     true,
	"BUSY":        true,
	"MISCONF":     true,
	"OOM":         true,
	"READONLY":    true,
	"NOREPLICAS":  true,
	"NOAUTH":      true,
	"WRONGPASS":   true,
	"NOPERM":      true,
	"WRONGTYPE":   true,
	"EXECABORT":   true,
	"MOVED":       true,
	"ASK":         true,
}

// classify returns the outcome of an operation that ended with err (nil:
// OK).
func classify(err error) Outcome {
	if err == nil {
		return OK
	}
	var er errorReply
	if errors.As(err, &er) {
		code, _, _ := strings.Cut(string(er), " ")
		if notApplied[code] {
			return Failed
		}
		return Unknown
	}
	if errors.Is(err, errDial) {
		return Failed
	}
	return Unknown
}
