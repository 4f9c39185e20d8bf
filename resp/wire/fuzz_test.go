package wire

import (
	"errors"
	"io"
	"testing"
)

// FuzzFramer feeds the Framer what any client may send: whatever the
// bytes, it must not panic, and how they are cut into reads must not
// change what it parses (Redis parses its query buffer the same way
// whatever each read brought). For any input and read size:
//
//   - ReadBatch over reads of that size returns the requests, and the
//     protocol error after them, that it returns for the input in one
//     read, and so does ReadFirst one request at a time;
//   - each request's raw bytes (ReadFirst) parse alone as that request;
//   - the requests, written back as multibulk requests, parse as
//     themselves.
func FuzzFramer(f *testing.F) {
	for _, s := range []string{
		"*1\r\n$4\r\nPING\r\n",
		"*2\r\n$4\r\nECHO\r\n$0\r\n\r\n*0\r\n*-1\r\n",
		"*1\r\n$4\r\nPINGxy*1\rX$4\rXPING\r\n",
		"PING\r\necho \"a b\"\n\r\n  \n",
		"set k a\"b c\" '\\x41' \"\\x4g\\n\"\n",
		"set a 'b\r\n",
		"set a \"b\"c\r\n",
		"a\x00b\r\nPING\n",
		"*2147483648\r\n",
		"*1\r\n$536870913\r\n",
		"*1\r\n$01\r\n",
		"*1\r\n:4\r\n",
		"*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r",
	} {
		f.Add([]byte(s), uint8(1))
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, in []byte, size uint8) {
		if len(in) > 4096 {
			return // the limits on a request's size start at 64 KiB
		}
		n := int(size)%32 + 1
		whole := frame(string(in), 1<<20, false)
		if got := frame(string(in), n, false); got != whole {
			t.Fatalf("ReadBatch, reads of %d bytes: %q\none read: %q", n, got, whole)
		}
		if got := frame(string(in), n, true); got != whole {
			t.Fatalf("ReadFirst, reads of %d bytes: %q\nReadBatch in one read: %q", n, got, whole)
		}

		var again []byte
		fr := chunked(string(in), n)
		for {
			argv, raw, err := fr.ReadFirst()
			if err != nil {
				var pe *ProtocolError
				if !errors.As(err, &pe) && !errors.Is(err, io.EOF) {
					t.Fatalf("ReadFirst: %v", err)
				}
				break
			}
			req := string(AppendCommand(nil, argv...))
			if alone := frame(string(raw), 1<<20, false); alone != req {
				t.Fatalf("raw bytes %q parse alone as %q, in the stream as %q", raw, alone, req)
			}
			again = append(again, req...)
		}
		if got := frame(string(again), n, false); got != string(again) {
			t.Fatalf("the requests written back %q parse as %q", again, got)
		}
	})
}
