package models

import (
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// historyCase is one hand-written history and the verdict it must get.
type historyCase struct {
	name string
	ops  []porcupine.Operation
	want porcupine.CheckResult
}

// call is an engine operation on lane (ClientId) lane over [start, end].
func call(lane int, start, end int64, input, output any) porcupine.Operation {
	return porcupine.Operation{ClientId: lane, Input: input, Call: start, Output: output, Return: end}
}

// envLane is the lane the hand-written histories use for environment events.
const envLane = 99

// event is an instantaneous environment event at tick.
func event(tick int64, input any) porcupine.Operation {
	return porcupine.Operation{ClientId: envLane, Input: input, Call: tick, Return: tick}
}

// checkTimeout bounds every hand-written check: they take microseconds, so
// hitting it is a bug in the model.
const checkTimeout = 5 * time.Second

func runCases(t *testing.T, cases []historyCase, checkFn func([]porcupine.Operation, time.Duration) (porcupine.CheckResult, porcupine.LinearizationInfo)) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := checkFn(tc.ops, checkTimeout)
			if got != tc.want {
				t.Fatalf("verdict %s, want %s", got, tc.want)
			}
		})
	}
}
