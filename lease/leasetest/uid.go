package leasetest

import "os"

// UID is the uid of Identity: the test process's own, because the engines
// refuse state files and directories of another uid, and the files a test
// makes on the real OS belong to the uid running it. It is the one OS read
// of this package, alone in this file so that internal/archtest can exempt
// exactly it from the engines' determinism rules.
var UID = os.Getuid()
