//go:build !unix

package resp

import "time"

// cpuTimes is unknown here: INFO reports zeros.
func cpuTimes() (sys, user time.Duration) { return 0, 0 }
