package resp

// Totals are the server's counters since start (or CONFIG RESETSTAT), as
// INFO stats reports them.
type Totals struct {
	Connections         int64 // total_connections_received
	RejectedConnections int64 // rejected_connections
	Commands            int64 // total_commands_processed
	Rejected            int64 // calls refused before they ran
	ErrorReplies        int64 // total_error_replies
	NetInput, NetOutput int64 // total_net_input_bytes, total_net_output_bytes
	Hits, Misses        int64 // keyspace_hits, keyspace_misses
	// LoopBatches counts the batches the event loop ran, LoopHandOffs the
	// connections it handed back to their goroutines (evloop_linux.go).
	LoopBatches, LoopHandOffs int64
}

// Totals returns the server's counters.
func (s *Server) Totals() Totals {
	st := &s.stats
	t := Totals{
		Connections:         st.connections.Load(),
		RejectedConnections: st.rejectedConns.Load(),
		Commands:            st.commands.Load(),
		Rejected:            st.rejected.Load(),
		ErrorReplies:        st.errors.Load(),
		NetInput:            st.netIn.Load(),
		NetOutput:           st.netOut.Load(),
		Hits:                st.hits.Load(),
		Misses:              st.misses.Load(),
	}
	t.LoopBatches, t.LoopHandOffs = s.loopCounts()
	return t
}
