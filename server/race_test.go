//go:build race

package server_test

// raceEnabled scales the largest tests down under the race detector;
// scripts/test.sh runs them at full size without it.
const raceEnabled = true
