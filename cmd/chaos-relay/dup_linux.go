package main

import "syscall"

// dup2 puts oldfd's file at newfd (linux/arm64 has no dup2, only dup3).
func dup2(oldfd, newfd int) error { return syscall.Dup3(oldfd, newfd, 0) }
