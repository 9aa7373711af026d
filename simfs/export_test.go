package simfs

// SetInjector replaces the injector, for tests that build an FS first.
func SetInjector(f *FS, in Injector) { f.opts.Injector = in }
