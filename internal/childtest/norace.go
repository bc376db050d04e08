//go:build !race

package childtest

const raceEnabled = false
