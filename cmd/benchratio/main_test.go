package main

import (
	"strings"
	"testing"
)

const sample = `goos: linux
BenchmarkPath/admitted/redis/bare-2    	   49878	     40000 ns/op	        76 cpu-µs/op	       595.0 p50-µs	      2000 p99-µs	     21133 req/s	   47543 B/op	     160 allocs/op
BenchmarkPath/admitted/redis/gateway-2 	   33853	     50000 ns/op	        80 cpu-µs/op	       926.0 p50-µs	      3000 p99-µs	     14834 req/s	   51731 B/op	     220 allocs/op
BenchmarkPath/poll/redis/bare-2 	   33853	     60000 ns/op	      3000 p99-µs	   100 allocs/op
BenchmarkPath/poll/redis/gateway-2 	   33853	     20000 ns/op	      1500 p99-µs	    90 allocs/op	  0.04 redis-cmds/op
PASS
BenchmarkPath/admitted/redis/bare-2    	   49878	     40000 ns/op	      2000 p99-µs	     160 allocs/op
BenchmarkPath/admitted/redis/gateway-2 	   33853	     40000 ns/op	      2000 p99-µs	     200 allocs/op
BenchmarkPath/admitted/redis/bare-2    	   49878	     40000 ns/op	      2000 p99-µs	     160 allocs/op
BenchmarkPath/admitted/redis/gateway-2 	   33853	     42000 ns/op	      2200 p99-µs	     200 allocs/op
`

func TestRatios(t *testing.T) {
	pairs, err := parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if len(pairs) != 2 || pairs[0].name != "Path/admitted/redis" || len(pairs[0].gateway) != 3 || len(pairs[1].bare) != 1 {
		t.Fatalf("pairs: %+v", pairs)
	}
	var out strings.Builder
	report(&out, pairs)
	got := out.String()
	for _, want := range []string{
		// throughput 0.80, 1.00, 0.952 → median 0.95; p99 1.5, 1.0, 1.1 → 1.10
		"Path/admitted/redis         3  0.95 (0.80–1.00)       1.10 (1.00–1.50)       200 / 160       -           throughput ≥ 0.95  met",
		"Path/poll/redis             1  3.00                   0.50                   90 / 100        0.04        throughput ≥ 2.50  met",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
}

func TestLatencyTarget(t *testing.T) {
	pairs, _ := parse(strings.NewReader("BenchmarkLatency/admitted/redis/bare-2 10 1000 ns/op 100 p99-µs\nBenchmarkLatency/admitted/redis/gateway-2 10 1000 ns/op 130 p99-µs\n"))
	var out strings.Builder
	report(&out, pairs)
	if !strings.Contains(out.String(), "p99 ≤ 1.1  MISSED") {
		t.Errorf("a p99 of 1.3× must miss the latency target:\n%s", out.String())
	}
}

func TestMissedTargetAndBadInput(t *testing.T) {
	pairs, _ := parse(strings.NewReader("BenchmarkPath/join/redis/bare-2 10 1000 ns/op\nBenchmarkPath/join/redis/gateway-2 10 2000 ns/op\n"))
	var out strings.Builder
	report(&out, pairs)
	if !strings.Contains(out.String(), "0.50") || !strings.Contains(out.String(), "MISSED") {
		t.Errorf("a gateway at half the bare throughput must miss the join target:\n%s", out.String())
	}
	if _, err := parse(strings.NewReader("BenchmarkPath/join/redis/bare-2 10 fast ns/op\n")); err == nil {
		t.Error("a line with no number read without error")
	}
}
