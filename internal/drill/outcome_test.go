package drill

import (
	"errors"
	"fmt"
	"io"
	"testing"
)

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		err  error
		want Outcome
	}{
		{nil, OK},
		{errorReply("TRYAGAIN leadership changed while the write was in flight: it may or may not have been applied"), Failed},
		{errorReply("CLUSTERDOWN no leader"), Failed},
		{errorReply("MISCONF disk full"), Failed},
		{errorReply("OOM command not allowed"), Failed},
		{errorReply("ERR server is shutting down"), Unknown},
		{errorReply("UNCERTAIN the outcome is unknown"), Unknown},
		{fmt.Errorf("%w: %w", errDial, errors.New("connection refused")), Failed},
		{fmt.Errorf("%w: %w", errSent, io.EOF), Unknown},
	} {
		if got := classify(c.err); got != c.want {
			t.Errorf("classify(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
