package postgres

// VecRefreshes reports how often the exact mode's vector cache was
// reloaded whole and refreshed incrementally (for the external tests).
func (s *Store) VecRefreshes() (full, incremental int64) {
	return s.vec.fullLoads.Load(), s.vec.deltas.Load()
}

// DropVecCache makes the next exact search reload every vector (into the
// buffers it has, as a reload did before): what each search after another
// process's write did before refreshes were incremental, the benchmark's
// baseline.
func (s *Store) DropVecCache() {
	s.vec.mu.Lock()
	defer s.vec.mu.Unlock()
	s.vec.loaded = false
}

// LexWarmStats reports how many searches the warm lexical index answered,
// how many full builds it installed and how many deltas it applied.
func (s *Store) LexWarmStats() (answered, builds, deltas int64) {
	x := &s.lexw
	return x.answered.Load(), x.builds.Load(), x.deltas.Load()
}

// WaitLexWarm waits for a background build of the warm lexical index.
func (s *Store) WaitLexWarm() { s.lexw.Wait() }
