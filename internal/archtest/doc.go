// Package archtest holds the tests of the project's architecture: which
// package may import which. It has no code of its own.
package archtest
