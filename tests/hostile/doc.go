// Package hostile is the hostile-input corpus run through the chaos binary: specs, flags
// and agent commands written as an attacker would, each with the exit code and message it
// must give (its tests are package hostile_test).
package hostile
