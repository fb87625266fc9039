package mcpwall

// GuardLines lets FuzzGuard (package mcpwall_test, which shares the guard's test messages
// with the tests of every transport) drive the guard's line loop directly.
var GuardLines = guardLines
