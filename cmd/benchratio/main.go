// Command benchratio reads `go test -bench` output holding pairs of
// benchmarks named …/bare and …/gateway (cmd/waitroom's BenchmarkPath) and
// prints, per pair, the gateway's throughput and p99 latency as ratios of
// the bare proxy's: the median over the runs, with the spread, against
// the targets in docs/performance.md (throughput from BenchmarkPath, at
// saturation; p99 from BenchmarkLatency, at a steady rate). Runs pair up in order: the i-th
// gateway result with the i-th bare one, which ran just before it.
//
//	go test -run '^$' -bench '^Benchmark(Path|Latency)$' ./cmd/waitroom/ | go run ./cmd/benchratio
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

func main() {
	pairs, err := parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchratio:", err)
		os.Exit(1)
	}
	if len(pairs) == 0 {
		fmt.Fprintln(os.Stderr, "benchratio: no …/bare and …/gateway pairs in the input")
		os.Exit(1)
	}
	report(os.Stdout, pairs)
}

// result is one benchmark line's figures.
type result struct {
	nsPerOp, p99, allocs float64
	redisCmds            float64 // -1 when the line has none (the memory store, the bare proxy)
}

// pair is every run of one path on one store, bare and gateway.
type pair struct {
	name          string // e.g. "Path/admitted/redis"
	bare, gateway []result
}

var line = regexp.MustCompile(`^Benchmark(\S+?/\S+)/(bare|gateway)(?:-\d+)?\s+\d+\s+(.*)$`)

// parse reads benchmark lines, keeping the order pairs first appear in.
func parse(r io.Reader) ([]*pair, error) {
	var order []*pair
	byName := map[string]*pair{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		m := line.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		res, err := figures(m[3])
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", m[1], m[2], err)
		}
		p := byName[m[1]]
		if p == nil {
			p = &pair{name: m[1]}
			byName[m[1]] = p
			order = append(order, p)
		}
		if m[2] == "bare" {
			p.bare = append(p.bare, res)
		} else {
			p.gateway = append(p.gateway, res)
		}
	}
	return order, sc.Err()
}

// figures reads "47700 ns/op  621.0 p50-µs  2277 p99-µs …".
func figures(s string) (result, error) {
	r := result{redisCmds: -1}
	f := strings.Fields(s)
	for i := 0; i+1 < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return r, fmt.Errorf("reading %q: %w", f[i], err)
		}
		switch f[i+1] {
		case "ns/op":
			r.nsPerOp = v
		case "p99-µs":
			r.p99 = v
		case "allocs/op":
			r.allocs = v
		case "redis-cmds/op":
			r.redisCmds = v
		}
	}
	if r.nsPerOp <= 0 {
		return r, fmt.Errorf("no ns/op in %q", s)
	}
	return r, nil
}

// target is what docs/performance.md asks of a path: a least throughput
// ratio and, when set, a largest p99 ratio.
type target struct{ throughput, p99 float64 }

var targets = map[string]target{
	"Path/admitted/redis":    {throughput: 0.95},
	"Path/admitted20k/redis": {throughput: 0.90},
	"Latency/admitted/redis": {p99: 1.1},
	"Path/poll/redis":        {throughput: 2.5},
	"Path/pollhtml/redis":    {throughput: 2.0},
	"Path/join/redis":        {throughput: 1.5},
}

func report(w io.Writer, pairs []*pair) {
	fmt.Fprintf(w, "%-24s %4s  %-22s %-22s %-15s %-11s %s\n", "benchmark/path/store", "runs", "throughput gw/bare", "p99 gw/bare", "allocs gw/bare", "redis cmds", "target")
	for _, p := range pairs {
		n := min(len(p.bare), len(p.gateway))
		if n == 0 {
			continue
		}
		thr, lat := make([]float64, n), make([]float64, n)
		for i := range n {
			thr[i] = p.bare[i].nsPerOp / p.gateway[i].nsPerOp
			if p.bare[i].p99 > 0 {
				lat[i] = p.gateway[i].p99 / p.bare[i].p99
			}
		}
		verdict := ""
		if t, ok := targets[p.name]; ok {
			var want []string
			if t.throughput > 0 {
				want = append(want, fmt.Sprintf("throughput ≥ %.2f", t.throughput))
			}
			if t.p99 > 0 {
				want = append(want, fmt.Sprintf("p99 ≤ %.1f", t.p99))
			}
			met := median(thr) >= t.throughput && (t.p99 == 0 || median(lat) <= t.p99)
			verdict = strings.Join(want, ", ") + map[bool]string{true: "  met", false: "  MISSED"}[met]
		}
		cmds := "-"
		var rc []float64
		for _, g := range p.gateway[:n] {
			if g.redisCmds >= 0 {
				rc = append(rc, g.redisCmds)
			}
		}
		if len(rc) > 0 {
			cmds = fmt.Sprintf("%.2f", median(rc))
		}
		fmt.Fprintf(w, "%-24s %4d  %-22s %-22s %-15s %-11s %s\n", p.name, n, spread(thr), spread(lat),
			fmt.Sprintf("%.0f / %.0f", p.gateway[n-1].allocs, p.bare[n-1].allocs), cmds, verdict)
	}
}

// spread is "0.97 (0.93–1.01)": the median and the range.
func spread(v []float64) string {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 1 {
		return fmt.Sprintf("%.2f", s[0])
	}
	return fmt.Sprintf("%.2f (%.2f–%.2f)", median(s), s[0], s[len(s)-1])
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
