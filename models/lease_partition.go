package models

import (
	"sort"

	"github.com/anishathalye/porcupine"
)

// leaseNamespace returns the namespace an input touches, or ok=false for an
// environment event (which touches them all).
func leaseNamespace(input any) (string, bool) {
	switch in := input.(type) {
	case LeaseAcquire:
		return in.Namespace, true
	case LeaseRelease:
		return in.Namespace, true
	case LeaseInspect:
		return in.Namespace, true
	case LeaseWithCurrent:
		return in.Namespace, true
	case LeaseCorruption:
		return in.Namespace, true
	case LeaseClear:
		return in.Namespace, true
	case LeaseReclaim:
		return in.Namespace, true
	case LeaseEpochCorruption:
		return in.Namespace, true
	case LeaseEpochRepair:
		return in.Namespace, true
	}
	return "", false
}

// leasePartition splits the history by namespace, in sorted namespace order
// so reports are deterministic. Environment events are copied into every
// partition: they are deterministic and instantaneous, so each partition
// sees the same deaths.
func leasePartition(history []porcupine.Operation) [][]porcupine.Operation {
	byNamespace := map[string][]porcupine.Operation{}
	var environment []porcupine.Operation
	for _, op := range history {
		if namespace, ok := leaseNamespace(op.Input); ok {
			byNamespace[namespace] = append(byNamespace[namespace], op)
		} else {
			environment = append(environment, op)
		}
	}
	if len(byNamespace) == 0 {
		return [][]porcupine.Operation{history}
	}
	namespaces := make([]string, 0, len(byNamespace))
	for namespace := range byNamespace {
		namespaces = append(namespaces, namespace)
	}
	sort.Strings(namespaces)
	partitions := make([][]porcupine.Operation, 0, len(namespaces))
	for _, namespace := range namespaces {
		// One allocation of the partition's size: copying the namespace's
		// operations and then appending the events grew it a second time.
		ops := byNamespace[namespace]
		partition := make([]porcupine.Operation, 0, len(ops)+len(environment))
		partitions = append(partitions, append(append(partition, ops...), environment...))
	}
	return partitions
}
