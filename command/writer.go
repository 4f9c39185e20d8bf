package command

import "github.com/goblindb/goblin/resp/wire"

// Writer appends a command's replies (wire.Writer: RESP2 or RESP3, with
// the double format the server is configured with).
type Writer = wire.Writer

// NewWriter returns a Writer of protocol proto (2 or 3).
func NewWriter(proto int) *Writer { return wire.NewWriter(proto) }
