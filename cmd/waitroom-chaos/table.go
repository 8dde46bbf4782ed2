package main

import (
	"fmt"
	"io"
	"slices"
	"time"
)

// Table prints a Markdown table of what held per fault over its runs: for
// each count, the worst run and in how many runs it was not zero; for
// times held, the median and the worst.
func Table(out io.Writer, results []Result) {
	fmt.Fprintln(out, "| fault | runs | max inside (max_active) | inversions | places lost (max growth) | sent back / admitted twice | held after fault, median / max | held after promotion, median / max | 5xx | refused / let through while held | runs with a problem |")
	fmt.Fprintln(out, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	var order []string
	by := map[string][]Result{}
	for _, r := range results {
		if by[r.Fault] == nil {
			order = append(order, r.Fault)
		}
		by[r.Fault] = append(by[r.Fault], r)
	}
	for _, name := range order {
		rs := by[name]
		col := func(f func(Verdict) int) string {
			worst, hit := 0, 0
			for _, r := range rs {
				n := f(r.Verdict)
				worst = max(worst, n)
				if n > 0 {
					hit++
				}
			}
			if hit == 0 {
				return "0"
			}
			return fmt.Sprintf("%d (%d runs)", worst, hit)
		}
		most, limit, over, growth, problems := 0, 0, 0, 0, 0
		var afterFault, afterPromotion []time.Duration
		for _, r := range rs {
			v := r.Verdict
			most, limit, growth = max(most, v.MaxInside), v.MaxActive, max(growth, v.MaxGrowth)
			if v.MaxInside > v.MaxActive {
				over++
			}
			if len(r.Problems) > 0 {
				problems++
			}
			afterFault = append(afterFault, v.HeldAfterFault)
			if r.Window.Promoted > r.Window.At {
				afterPromotion = append(afterPromotion, v.HeldAfterPromotion)
			}
		}
		fmt.Fprintf(out, "| %s | %d | %d (%d); over in %d runs | %s | %s (%d) | %s / %s | %s | %s | %s | %s / %s | %d |\n",
			name, len(rs), most, limit, over,
			col(func(v Verdict) int { return v.Inversions }),
			col(func(v Verdict) int { return v.PlacesLost }), growth,
			col(func(v Verdict) int { return v.SentBack }), col(func(v Verdict) int { return v.Twice }),
			spread(afterFault), spread(afterPromotion),
			col(func(v Verdict) int { return v.FiveXX }),
			col(func(v Verdict) int { return v.Refused }), col(func(v Verdict) int { return v.LetThrough }),
			problems)
	}
}

// spread is "median / max" in seconds; "-" for none.
func spread(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	slices.Sort(ds)
	return fmt.Sprintf("%.1f s / %.1f s", ds[len(ds)/2].Seconds(), ds[len(ds)-1].Seconds())
}

// Line is one run's summary, for progress.
func Line(r Result, run int) string {
	v := r.Verdict
	s := fmt.Sprintf("%s run %d: %d visitors, %d admitted, max inside %d/%d, inversions %d, places lost %d, sent back %d, twice %d, held %.1fs (after promotion %.1fs), 5xx %d, refused %d, let through %d; %s",
		r.Fault, run, v.Visitors, v.Admitted, v.MaxInside, v.MaxActive, v.Inversions, v.PlacesLost, v.SentBack, v.Twice,
		v.HeldAfterFault.Seconds(), v.HeldAfterPromotion.Seconds(), v.FiveXX, v.Refused, v.LetThrough, r.Note)
	if v.ReleasesNoMaster > 0 {
		s += fmt.Sprintf("; %d site releases while there was no master", v.ReleasesNoMaster)
	}
	return s
}
