package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// writeText prints the summary for people.
func writeText(w io.Writer, s summary, ramp string) {
	v := s.Visitors
	fmt.Fprintf(w, "waitroom-load: %s, %d visitors over %s, %s, then %s -> %s\n",
		s.Profile, s.Planned, ramp, s.Accept, s.After, s.Target)
	if len(s.Targets) > 1 {
		per := make([]string, len(s.Targets))
		for i, t := range s.Targets {
			per[i] = fmt.Sprintf("%s %d requests", t, s.ByTarget[i])
		}
		fmt.Fprintf(w, "spread by %s over %d gateways: %s\n", s.Spread, len(s.Targets), strings.Join(per, ", "))
	}
	fmt.Fprintf(w, "ran %.2fs: %d arrived; %d admitted (%d straight in, %d from the line), %d still waiting, %d failed, %d left\n\n",
		s.DurationSeconds, v.Arrived, v.Admitted, v.StraightIn, v.FromLine, v.StillWaiting, v.Failed, v.Left)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "requests\t  count\tper s\tp50 ms\tp90 ms\tp99 ms\tmax ms\terrors\t")
	for k := range kinds {
		kv := s.Kinds[k.String()]
		l := kv.Latency
		fmt.Fprintf(tw, "%-8s\t%d\t%.1f\t%.2f\t%.2f\t%.2f\t%.2f\t%d\t\n", k, kv.Requests, kv.PerSecond, l.P50, l.P90, l.P99, l.Max, kv.Errors)
	}
	fmt.Fprintf(tw, "all     \t%d\t%.1f\t\t\t\t\t%d\t\n", s.Requests, s.PerSecond, s.ErrorCount)
	_ = tw.Flush()
	f := s.FirstAnswer
	verdict := "every arrival answered"
	if !f.AllOK {
		verdict = fmt.Sprintf("NOT every arrival answered: %d of %d", f.Answered, s.Planned)
	}
	fmt.Fprintf(w, "first answer: %s (%d unanswered: 5xx or no answer), %.1f per s; p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms\n",
		verdict, f.Unanswered, f.PerSecond, f.Latency.P50, f.Latency.P90, f.Latency.P99, f.Latency.Max)
	if s.CutOff > 0 {
		fmt.Fprintf(w, "(%d requests still in flight at the end of the grace were cut off; not errors)\n", s.CutOff)
	}

	fmt.Fprintf(w, "\nerrors: %s\n", counts(s.Errors, "none", "\n  "))
	fmt.Fprintf(w, "answers by state: %s\n", counts(s.States, "none", ", "))
	writeOrder(w, s.Order)
	writeAdmissions(w, s.Admissions)
	writeUpstream(w, s.Upstream)
	if s.OK {
		fmt.Fprintln(w, "\nresult: OK")
		return
	}
	var why []string
	if !s.FirstAnswer.AllOK {
		why = append(why, fmt.Sprintf("%d of %d arrivals answered", s.FirstAnswer.Answered, s.Planned))
	}
	if s.ErrorCount > 0 {
		why = append(why, fmt.Sprintf("%d errors", s.ErrorCount))
	}
	if s.Order.Inversions > 0 {
		why = append(why, fmt.Sprintf("%d order inversions", s.Order.Inversions))
	}
	if s.Upstream.OverLimit {
		why = append(why, fmt.Sprintf("%d inside at once, over max_active %d", s.Upstream.MaxInside, *s.Upstream.MaxActive))
	}
	fmt.Fprintf(w, "\nresult: FAILED (%s)\n", strings.Join(why, ", "))
}

// counts lists a map's entries, most frequent first.
func counts(m map[string]int64, none, sep string) string {
	if len(m) == 0 {
		return none
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if m[a] != m[b] {
			return int(m[b] - m[a])
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	if sep == "\n  " {
		return sep + strings.Join(parts, sep)
	}
	return strings.Join(parts, sep)
}

func writeOrder(w io.Writer, o orderReport) {
	if o.Inversions == 0 {
		fmt.Fprintf(w, "order: %d ticket holders, 0 provable inversions: nobody was let in ahead of an earlier ticket\n", o.Checked)
		return
	}
	fmt.Fprintf(w, "order: %d ticket holders, %d provable inversions (%d visitors overtaken), e.g.\n", o.Checked, o.Inversions, o.Overtaken)
	for _, e := range o.Examples {
		fmt.Fprintf(w, "  ticket %d was still waiting at %.2fs, after ticket %d was let in by %.2fs\n",
			e.EarlierTicket, e.EarlierWaitingAt, e.LaterTicket, e.LaterAdmittedAt)
	}
}

func writeAdmissions(w io.Writer, a admissions) {
	per := make([]string, len(a.PerMinute))
	for i, n := range a.PerMinute {
		per[i] = fmt.Sprint(n)
	}
	fmt.Fprintf(w, "admissions per minute of the run: %s (the last minute may be partial)\n", strings.Join(per, ", "))
	pace := "not measured (fewer than two admitted from the line)"
	if a.LinePace != nil {
		pace = fmt.Sprintf("%.1f per minute", *a.LinePace)
	}
	fmt.Fprintf(w, "line pace: %s", pace)
	l := a.Limits
	switch {
	case l.Source == "none":
		fmt.Fprint(w, "; the room's limits are unknown (use -admin or -expect-rate and -expect-max-active)\n")
		return
	case l.AdmitRate != "":
		fmt.Fprintf(w, "; room admit_rate %s (%s)", l.AdmitRate, l.Source)
	}
	if a.RatioToLimit != nil {
		fmt.Fprintf(w, ", %.0f%% of it", *a.RatioToLimit*100)
	}
	if l.MaxActive != nil {
		fmt.Fprintf(w, "; max_active %d", *l.MaxActive)
	}
	fmt.Fprintln(w)
}

func writeUpstream(w io.Writer, u upstreamReport) {
	if !u.Enabled {
		fmt.Fprintln(w, "inside at once: not measured; this is the client's view only (use -upstream to count at the site)")
		return
	}
	fmt.Fprintf(w, "upstream %s: %d requests from %d visitors (%d without Waitroom-Visitor); at most %d inside at once (at %.2fs)",
		u.URL, u.Requests, u.Visitors, u.WithoutVisitor, u.MaxInside, u.MaxInsideAt)
	if u.MaxActive != nil {
		fmt.Fprintf(w, ", max_active %d", *u.MaxActive)
	}
	fmt.Fprintln(w)
}
