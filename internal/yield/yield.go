// Package yield lets the goroutines that can run do so before the caller
// goes on: a caller about to act for many (hand a batch of writes to Raft,
// take what connections posted) first lets the others that are runnable
// add to what it acts on.
//
// With one thread running Go code, the goroutines a poll of the network
// or a closed channel made runnable wait in the thread's run queue while
// the first of them runs. runtime.Gosched runs them, but the scheduler may
// come back before every one has run (it looks at its global queue every
// so often), so WhileGrowing yields until two yields in a row found
// nothing more.
package yield

import "runtime"

// WhileGrowing yields the processor until two yields in a row found count
// no higher, count reached enough, or max yields were made (enough or max
// zero: no such bound).
func WhileGrowing(count func() int, enough, max int) {
	n, idle := count(), 0
	for yields := 0; idle < 2 && (enough <= 0 || n < enough) && (max <= 0 || yields < max); yields++ {
		runtime.Gosched()
		if m := count(); m > n {
			n, idle = m, 0
		} else {
			idle++
		}
	}
}
