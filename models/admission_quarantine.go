package models

// AdmissionQuarantine is the input of admission.Quarantine called by an
// operator process beside live traffic, on a judgement (a sha256) from an
// earlier InspectState that may be stale. It is an operation, not an
// environment event: the operator may crash or lose power between the move
// and its return, and only an operation's unknown outcome lets porcupine
// place the move, or no move, as the run allows.
//
// The model does not judge whose record may be moved: the engine refuses a
// live owner it can judge (ErrActive) but moves an indeterminate record
// (another host's or namespace's owner, live or not) on the operator's
// word, and the workload's ground truth judges the owner at the move. What
// the model holds is the effect: a move empties the slot (the record, and
// any record a swap displaced, is gone for every caller: the displaced
// holder's next compare-and-swap loses), and a refusal changes nothing.
type AdmissionQuarantine struct {
	Proc int
}

// AdmissionQuarantineResult is the output of an operator's Quarantine (or
// Unknown{}): Moved when it reported the record moved, false for every
// refusal.
type AdmissionQuarantineResult struct {
	Moved bool
}

// quarantined applies an operator's Quarantine with output: a move is
// legal only over a record (claimed or corrupt); a refusal leaves s.
func (s admissionState) quarantined(output any) []any {
	out, known := output.(AdmissionQuarantineResult)
	if !known {
		mustUnknown(output)
		if s.slot == slotEmpty {
			return []any{s}
		}
		return []any{s, admissionState{}}
	}
	if !out.Moved {
		return []any{s}
	}
	if s.slot == slotEmpty {
		return nil
	}
	return []any{admissionState{}}
}
