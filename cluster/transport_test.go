package cluster_test

import (
	"errors"
	"testing"

	"github.com/hashicorp/raft"
)

// Raft's transport does not pipeline AppendEntries: hashicorp/raft's
// pipeline can wedge a leader's replication to a follower that refused an
// append, and then its shutdown (the comment at the transport's config).
// Raft falls back to one request at a time when the transport refuses a
// pipeline.
func TestRaftTransportDoesNotPipeline(t *testing.T) {
	e := newEnv(t, 1)
	tn := e.start("n1", 1, "")
	_, err := tn.c.RaftTransport().AppendEntriesPipeline("n2", "127.0.0.1:1")
	if !errors.Is(err, raft.ErrPipelineReplicationNotSupported) {
		t.Fatalf("AppendEntriesPipeline: %v, want %v", err, raft.ErrPipelineReplicationNotSupported)
	}
}
