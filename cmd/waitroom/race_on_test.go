//go:build race

package main

// raceDetector: this test binary was built with -race.
const raceDetector = true
