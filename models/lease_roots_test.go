package models

import (
	"testing"

	"github.com/anishathalye/porcupine"
)

// TestLeaseRoots: the generation is a capability within its owner's root
// only. A Manager of another root (another process that learned the
// generation, or the owner's own process) may not release it, and the
// owner's process is fenced through it.
func TestLeaseRoots(t *testing.T) {
	grant := LeaseAcquire{Namespace: ns, Proc: 1, Host: "a", Session: "s1", Root: "r1"}
	foreignRelease := LeaseRelease{Namespace: ns, Proc: 2, Generation: "g1", Session: "s1", Root: "r2"}
	ownRootRelease := LeaseRelease{Namespace: ns, Proc: 2, Generation: "g1", Session: "s1", Root: "r1"}
	foreignFence := LeaseWithCurrent{Namespace: ns, Proc: 1, Generation: "g1", Session: "s1", Root: "r2"}
	ownFence := LeaseWithCurrent{Namespace: ns, Proc: 1, Generation: "g1", Session: "s1", Root: "r1"}
	ownerNotOwner := LeaseReleaseResult{Kind: LeaseNotOwner, OwnerGeneration: "g1", OwnerSession: "s1"}
	runCases(t, []historyCase{
		{"foreign root refused, own root releases", []porcupine.Operation{
			call(1, 1, 2, grant, acquired("g1", 1)),
			call(2, 3, 4, foreignRelease, ownerNotOwner),
			call(1, 5, 6, foreignFence, fenced),
			call(1, 7, 8, ownFence, fenceOK),
			call(2, 9, 10, ownRootRelease, released),
		}, porcupine.Ok},
		{"a foreign root's release released", []porcupine.Operation{
			call(1, 1, 2, grant, acquired("g1", 1)),
			call(2, 3, 4, foreignRelease, released),
		}, porcupine.Illegal},
		{"the owner's fence through another root ran", []porcupine.Operation{
			call(1, 1, 2, grant, acquired("g1", 1)),
			call(1, 3, 4, foreignFence, fenceOK),
		}, porcupine.Illegal},
	}, CheckLease)
}
