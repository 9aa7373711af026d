module github.com/leasekit/leasekit

go 1.26.0

require (
	github.com/anishathalye/porcupine v1.3.1
	golang.org/x/sys v0.50.0
	pgregory.net/rapid v1.3.0
)
