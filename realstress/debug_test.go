package realstress

import (
	"os"

	"github.com/anishathalye/porcupine"

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
	history, err := ReadHistory(dir)
	if err != nil {
		t.Fatal(err)
	}
	result := CheckSegmented(models.LeaseNondeterministicModel(), history.Operations, 1, defaultCheckTimeout)
	t.Logf("result %v, %d ops, %d segments, %d configurations", result.Result, len(history.Operations), result.Segments, result.Configurations)
	if result.Result != porcupine.Illegal {
		return
	}
	if err := writeFailure(dir+"/failure.txt", result.Info, result.Model); err != nil {
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
