package apptest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// serveWait bounds how long Serve waits for a server to be ready and,
// after cancellation, to return.
const serveWait = 20 * time.Second

// Serve runs run (a manager's Run) until the test ends or stop is called.
// It waits for the listen address on ready (sent by the server's Ready
// callback) and fails the test if run returns first or nothing comes
// within 20 s. stop cancels run and returns its error, or an error if it
// does not return within 20 s; calling it again returns the same result.
func Serve(t testing.TB, ready <-chan string, run func(context.Context) error) (addr string, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	select {
	case addr = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("Run returned before it was ready: %v", err)
	case <-time.After(serveWait):
		cancel()
		t.Fatalf("not ready after %v", serveWait)
	}
	var once sync.Once
	var runErr error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-done:
			case <-time.After(serveWait):
				runErr = errors.New("Run did not return within " + serveWait.String() + " of cancellation")
			}
		})
		return runErr
	}
	t.Cleanup(func() { _ = stop() })
	return addr, stop
}
