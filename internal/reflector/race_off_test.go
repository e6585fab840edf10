//go:build !race

package reflector

// raceEnabled is true under the race detector, which makes every spawned
// helper process slow to start; the process tests then spawn fewer.
const raceEnabled = false
