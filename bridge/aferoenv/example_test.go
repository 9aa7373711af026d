package aferoenv_test

import (
	"fmt"

	"github.com/spf13/afero"

	"github.com/leasekit/leasekit/bridge/aferoenv"
	"github.com/leasekit/leasekit/simfs"
)

// Code written against afero runs on a simulated filesystem: here afero's
// WriteFile and ReadFile on simfs. In a campaign the FS is a sim.Proc's,
// with its crashes and faults.
func Example() {
	files := simfs.New(simfs.Options{Dev: 1})
	files.MkdirAll("/data", 0o755, 1000)
	a := afero.Afero{Fs: aferoenv.New(files.View(1000))}
	if err := a.WriteFile("/data/config.json", []byte(`{"on":true}`), 0o600); err != nil {
		fmt.Println(err)
		return
	}
	data, err := a.ReadFile("/data/config.json")
	fmt.Println(string(data), err)
	_, err = a.ReadFile("/data/missing")
	fmt.Println(err)
	// Output:
	// {"on":true} <nil>
	// open /data/missing: no such file or directory
}
