package metrics_test

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape is one parsed /metrics page.
type scrape map[string]*dto.MetricFamily

// scrapeOf GETs h as Prometheus would and parses the text format. The parser
// must be built with NewTextParser: its zero value has no name validation
// scheme and panics on the first name.
func scrapeOf(tb testing.TB, h http.Handler) scrape {
	tb.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	res, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		tb.Fatalf("GET /metrics: %v", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		tb.Fatalf("GET /metrics: status %d", res.StatusCode)
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		tb.Fatalf("GET /metrics: Content-Type %q, want the text format", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(res.Body)
	if err != nil {
		tb.Fatalf("parsing /metrics: %v", err)
	}
	return fams
}

// find returns the series of family name whose labels are exactly labels,
// given as name, value pairs, or nil.
func (s scrape) find(name string, labels ...string) *dto.Metric {
	want := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
	for _, m := range s[name].GetMetric() {
		got := map[string]string{}
		for _, lp := range m.GetLabel() {
			if lp.GetName() != "le" { // histogram buckets are inside the series
				got[lp.GetName()] = lp.GetValue()
			}
		}
		if maps.Equal(got, want) {
			return m
		}
	}
	return nil
}

func (s scrape) must(tb testing.TB, name string, labels ...string) *dto.Metric {
	tb.Helper()
	m := s.find(name, labels...)
	if m == nil {
		tb.Fatalf("no series %s%v in the scrape", name, labels)
	}
	return m
}

// counter returns a counter's value, failing when the series is missing.
func (s scrape) counter(tb testing.TB, name string, labels ...string) float64 {
	tb.Helper()
	if got := s[name].GetType(); got != dto.MetricType_COUNTER {
		tb.Fatalf("%s: type %v, want counter", name, got)
	}
	return s.must(tb, name, labels...).GetCounter().GetValue()
}

// gauge returns a gauge's value, failing when the series is missing.
func (s scrape) gauge(tb testing.TB, name string, labels ...string) float64 {
	tb.Helper()
	if got := s[name].GetType(); got != dto.MetricType_GAUGE {
		tb.Fatalf("%s: type %v, want gauge", name, got)
	}
	return s.must(tb, name, labels...).GetGauge().GetValue()
}

// histogram returns a histogram series, failing when it is missing.
func (s scrape) histogram(tb testing.TB, name string, labels ...string) *dto.Histogram {
	tb.Helper()
	if got := s[name].GetType(); got != dto.MetricType_HISTOGRAM {
		tb.Fatalf("%s: type %v, want histogram", name, got)
	}
	return s.must(tb, name, labels...).GetHistogram()
}

// bucket returns the cumulative count of h's bucket with upper bound le.
func bucket(tb testing.TB, h *dto.Histogram, le float64) uint64 {
	tb.Helper()
	i := slices.IndexFunc(h.GetBucket(), func(b *dto.Bucket) bool { return b.GetUpperBound() == le })
	if i < 0 {
		tb.Fatalf("no bucket le=%v", le)
	}
	return h.GetBucket()[i].GetCumulativeCount()
}

// roomSeries lists the families that still hold a series labelled room.
func (s scrape) roomSeries(room string) []string {
	var found []string
	for name, f := range s {
		for _, m := range f.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "room" && lp.GetValue() == room {
					found = append(found, name)
				}
			}
		}
	}
	slices.Sort(found)
	return slices.Compact(found)
}

// clock is a store clock the test moves by hand.
type clock struct{ ns atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ns.Store(time.Date(2026, 3, 1, 9, 59, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *clock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *clock) advance(d time.Duration) { c.ns.Add(int64(d)) }
