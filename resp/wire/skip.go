package wire

import (
	"bufio"
	"errors"
	"fmt"
	"strconv"
)

// SkipReply reads one RESP2 or RESP3 reply of any shape and discards it
// without allocating, for load generators that only count replies. An
// error reply, or the first one inside an aggregate, is returned as an
// Error once the whole reply is consumed.
func SkipReply(br *bufio.Reader) error {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return fmt.Errorf("%w: %q", ErrMalformed, line)
	}
	kind, body := line[0], line[1:len(line)-2]
	switch kind {
	case '+', ':', ',', '#', '_', '(':
		return nil
	case '-':
		return Error(body)
	}
	n, err := strconv.Atoi(string(body))
	if err != nil {
		return fmt.Errorf("%w: %q", ErrMalformed, line)
	}
	switch kind {
	case '$', '=', '!':
		if n < 0 {
			return nil
		}
		_, err = br.Discard(n + 2)
		return err
	case '%', '|':
		n *= 2
		fallthrough
	case '*', '~', '>':
		var first error
		for range n {
			if err := SkipReply(br); err != nil {
				var e Error
				if !errors.As(err, &e) {
					return err
				}
				if first == nil {
					first = err
				}
			}
		}
		return first
	}
	return fmt.Errorf("%w: type %q", ErrMalformed, kind)
}
