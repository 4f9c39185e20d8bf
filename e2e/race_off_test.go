//go:build !race

package e2e

// raceEnabled: the tests run under the race detector.
const raceEnabled = false
