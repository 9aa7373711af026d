//go:build !linux

package main

import "github.com/leasekit/leasekit/leasecli"

// leadCommandTree: without subreapers and /proc, only the command itself
// is covered (docs/LEASEREAL.md, gaps).
func leadCommandTree() error { return nil }

// waitDescendants has no subreaper to wait as.
func waitDescendants() error { return nil }

// commandGroups: no process groups to read; every group is judged empty.
func commandGroups() leasecli.Groups { return noGroups{} }

type noGroups struct{}

func (noGroups) GroupRuns(int) (bool, error) { return false, nil }
