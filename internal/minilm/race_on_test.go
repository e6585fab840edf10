//go:build race

package minilm

// raceEnabled: the race detector multiplies memory use, so RSS checks skip.
const raceEnabled = true
