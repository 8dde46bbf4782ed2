package main

import "flag"

// testParallel is how many t.Parallel tests of this package run at once
// when go test was not given -parallel: go test's default is GOMAXPROCS
// (2 on a 2-core machine), but most of this package's parallel tests wait
// on the clock (the minute-long floods and farm, Chromium, a process under
// test), so four at once overlap their waits. More starves the ones that
// need the CPU: at 8, on a busy 2-core machine, six tests missed their
// bounds. Set here, not in the Makefile, so that the other packages keep
// go test's default and a plain `go test ./...` gets it too.
const testParallel = "4"

// defaultParallel sets -test.parallel to testParallel unless it was given;
// TestMain calls it after flag.Parse and before m.Run reads it.
func defaultParallel() {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", testParallel)
	}
}
