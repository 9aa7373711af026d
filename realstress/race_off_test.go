//go:build !race

package realstress

const raceEnabled = false
