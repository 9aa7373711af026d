//go:build race

package realstress

// raceEnabled: the workers are race-instrumented test binaries, several
// times slower.
const raceEnabled = true
