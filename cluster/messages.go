package cluster

import (
	"encoding/json"
	"fmt"
)

// msgKind is the first byte of a user message between nodes.
type msgKind uint8

// Message kinds. Values are part of the gossip protocol: never renumber.
const (
	// msgClaim asks a node to take part in a bootstrap: the claimer
	// intends to bootstrap a cluster of exactly Set.
	msgClaim msgKind = iota + 1
	// msgClaimReply grants or denies a claim.
	msgClaimReply
	// msgRelease gives up a claim (the attempt failed).
	msgRelease
	// msgProgress tells every other node how far the sender has applied
	// the log, and how far that is durable.
	msgProgress
)

func (k msgKind) String() string {
	switch k {
	case msgClaim:
		return "claim"
	case msgClaimReply:
		return "claim-reply"
	case msgRelease:
		return "release"
	case msgProgress:
		return "progress"
	}
	return fmt.Sprintf("msg(%d)", uint8(k))
}

// message is the body of every user message; each kind uses some fields.
// These messages are rare (bootstrap) or small and periodic (progress), so
// JSON's cost does not matter and its readability helps debugging.
type message struct {
	From    string   `json:"from"`
	Nonce   uint64   `json:"nonce,omitempty"`
	Set     []string `json:"set,omitempty"`
	Granted bool     `json:"granted,omitempty"`
	Reason  string   `json:"reason,omitempty"`
	Applied uint64   `json:"applied,omitempty"`
	// LogFault: the sender's Raft log is failing (progress reports).
	LogFault bool `json:"log_fault,omitempty"`
	// Durable: how far the sender's applied entries are durable in its
	// log; Always: it syncs every append (progress reports).
	Durable uint64 `json:"durable,omitempty"`
	Always  bool   `json:"always,omitempty"`
}

func encodeMsg(k msgKind, m *message) []byte {
	b, _ := json.Marshal(m)
	return append([]byte{byte(k)}, b...)
}

func decodeMsg(b []byte) (msgKind, *message, error) {
	if len(b) < 1 {
		return 0, nil, fmt.Errorf("cluster: empty message")
	}
	var m message
	if err := json.Unmarshal(b[1:], &m); err != nil {
		return 0, nil, fmt.Errorf("cluster: bad %v message: %w", msgKind(b[0]), err)
	}
	return msgKind(b[0]), &m, nil
}
