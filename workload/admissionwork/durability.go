package admissionwork

import "fmt"

// judgeDurability is the durability oracle's check at a power loss (the
// first step the host's new boot is seen): the slot record a controller's
// call reported done (acquired, updated, released) is still what is on disk
// (workkit.DoneRecord says when there is nothing to judge). A hostile
// corruption or its repair in between spoils the judgement.
func (aw *admissionWorld) judgeDurability() {
	judged, err := aw.slot.AfterPowerLoss()
	switch {
	case err != nil:
		aw.fail(fmt.Errorf("durability: %w", err), false)
	case judged:
		aw.world.Probe("admission-done-survives-power-loss")
	default:
		aw.world.Probe("admission-durability-unjudged")
	}
}
