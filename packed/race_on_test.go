//go:build race

package packed

// raceEnabled scales randomized tests down under the race detector, which
// makes them about ten times slower.
const raceEnabled = true
