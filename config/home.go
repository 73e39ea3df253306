package config

// HomeView is the configuration of the auto-memory file's home history: a
// copy of c whose root is dir and which keeps exactly one file, name, as
// the L2 memory file (with c's schema for it). Every other path, whatever
// a remote's home tree holds, is not kept there, so it is never written
// under the home directory.
func (c *Config) HomeView(dir, name string) *Config {
	h := &Config{Root: dir, Home: c.Home, MaxSize: c.MaxSize, Memory: name, MemoryPinned: true, Graph: "\x00", TTL: c.TTL, SyncHome: c.SyncHome}
	if k, ok := c.Classify(c.AutoMemory()); ok && k.Schema != "markdown" {
		h.Rules, h.user = []Rule{{Glob: name, Schema: k.Schema}}, 1 // the user's own schema for it
	}
	return h
}
