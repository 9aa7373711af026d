module github.com/leasekit/leasekit/bridge/aferoenv

go 1.26.0

require (
	github.com/leasekit/leasekit v0.0.0-00010101000000-000000000000
	github.com/spf13/afero v1.15.0
)

require (
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/text v0.28.0 // indirect
)

replace github.com/leasekit/leasekit => ../..
