package flockunlink

import (
	"errors"
	"syscall"
)

// isWouldBlock reports flock's "held by another description".
func isWouldBlock(err error) bool { return errors.Is(err, syscall.EWOULDBLOCK) }
