package challenge

import (
	"fmt"
	"testing"
	"time"
)

func BenchmarkIssue(b *testing.B) {
	is := testIssuer(b)
	c := sample()
	b.ReportAllocs()
	for b.Loop() {
		_ = is.Issue(c)
	}
}

// BenchmarkCheck checks a valid header, the gate's cost per solved
// challenge, with one key and during a rotation.
func BenchmarkCheck(b *testing.B) {
	for _, keys := range [][]string{{"first secret"}, {"first secret", "old secret"}} {
		b.Run(fmt.Sprintf("keys=%d", len(keys)), func(b *testing.B) {
			is := testIssuer(b, keys...)
			header := solved(is, sample())
			b.ReportAllocs()
			for b.Loop() {
				if _, err := is.Check(header, "concert", testNetwork, t0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCheck_Forged is what a flood of made-up headers costs.
func BenchmarkCheck_Forged(b *testing.B) {
	is := testIssuer(b)
	header := solved(testIssuer(b, "attacker"), sample())
	b.ReportAllocs()
	for b.Loop() {
		_, _ = is.Check(header, "concert", testNetwork, t0)
	}
}

// BenchmarkSolve is native Go's hash rate: what a farm's CPU core does, next
// to a browser's in web's BenchmarkChallengeBrowser_HashRate.
func BenchmarkSolve(b *testing.B) {
	is := testIssuer(b)
	var hashes float64
	start := time.Now()
	for b.Loop() {
		c := sample()
		c.Bits = 16
		prefix := is.Issue(c)
		var n float64
		fmt.Sscan(Solve(prefix, c.Bits), &n)
		hashes += n + 1
	}
	b.ReportMetric(hashes/time.Since(start).Seconds(), "hashes/s")
}
