package realstress

import (
	"os"

	"github.com/leasekit/leasekit/models"
	"strconv"
	"testing"
)

// TestCheckKeptDir re-checks a kept stress directory named by
// REALSTRESS_CHECK_DIR (a debugging aid): it writes failure.txt and logs
// the operations whose stamps fall in [FROM, TO].
func TestCheckKeptDir(t *testing.T) {
	dir := os.Getenv("REALSTRESS_CHECK_DIR")
	if dir == "" {
		t.Skip("set REALSTRESS_CHECK_DIR to re-check a kept stress directory")
	}
	result, history, info, err := CheckDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("result %v, %d ops", result, len(history.Operations))
	if err := writeFailure(dir+"/failure.txt", info, models.LeaseModel()); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(dir + "/failure.txt")
	t.Logf("%s", data)
	t.Logf("window:\n%s", describeHistory(history.Operations, int64(envInt("FROM")), int64(envInt("TO"))))
}

// envInt reads a decimal environment variable (0 when unset or invalid).
func envInt(name string) int {
	value, _ := strconv.Atoi(os.Getenv(name))
	return value
}
