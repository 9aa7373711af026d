package campaign

// The tests use the self-test lock (selftest.go) twice more: correct, and with
// the planted empty-lock-breaking bug, whatever breakEmptyLock says.
func init() {
	Register(toyEngine("toylock", false))
	Register(toyEngine("toylock-buggy", true))
}
