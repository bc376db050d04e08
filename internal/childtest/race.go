//go:build race

package childtest

// RaceEnabled reports whether the test binary was built with the race detector, under which
// a child runs without an address-space limit and about six times slower.
const RaceEnabled = true
