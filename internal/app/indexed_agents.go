package app

import "context"

// IndexedAgents lists the agents the index has files of (memory files and
// sessions; archives aside), in the order of their files: a scan mines
// those whose directory has gone, so that their drawers go too.
func (a *App) IndexedAgents(ctx context.Context) ([]string, error) {
	h := a.home
	files, err := a.store.Files(ctx, "hive/agents/")
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	for _, f := range files {
		id, archive, ok := h.AgentFromPath(h.Abs(f.Source))
		if !ok {
			id, ok = h.SessionFromPath(h.Abs(f.Source))
		}
		if ok && !archive && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out, nil
}
