//go:build unix && !linux

package main

import "syscall"

// dup2 puts oldfd's file at newfd.
func dup2(oldfd, newfd int) error { return syscall.Dup2(oldfd, newfd) }
