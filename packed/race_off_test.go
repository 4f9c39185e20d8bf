//go:build !race

package packed

const raceEnabled = false
