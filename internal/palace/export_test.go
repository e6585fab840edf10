package palace

// EmbedWaiting reports how many mining and query calls wait for the
// embedder, for tests of their order.
func (p *Palace) EmbedWaiting() (mine, query int) {
	if p.gate == nil {
		return 0, 0
	}
	p.gate.mu.Lock()
	defer p.gate.mu.Unlock()
	return len(p.gate.mine), len(p.gate.query)
}
