// Package workkit is what every engine workload (workload/leasework,
// admissionwork, dirleasework) shares beside the simulator core: the
// conversion of a recorded history into porcupine operations and its check
// (Operations, CheckHistory, CheckMessage), the ledger of who is alive that
// records deaths and reboots (LifeLedger), reads and writes through a
// volume's root view between steps (ReadRoot, WriteRoot, SyncRoot), the
// hostile hooks' corruption (Garble) and the mutation-claim probes
// (NoteClaimRename).
package workkit
