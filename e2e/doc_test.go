// Package e2e holds Goblin's end-to-end tests: they build goblind once,
// start real processes on loopback addresses with free ports and temporary
// data directories, talk to them through real Redis clients, and restart,
// kill and partition them. harness_test.go has the shared helpers.
package e2e
