package resp

import "os"

// GOBLIN_TEST_EVENT_LOOP=1 runs every test's server with the event loop
// (test.sh runs the package once more so).
func init() { eventLoopForTests = os.Getenv("GOBLIN_TEST_EVENT_LOOP") == "1" }
