package cluster

// OldBuild makes a node gossip that it applies log entries up to version
// v only, as a build from before group entries does.
func OldBuild(c *Config, v int) { c.entries = v }
