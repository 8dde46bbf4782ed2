package waitroom

import (
	"testing"
	"time"
)

func TestAdmissionRate(t *testing.T) {
	t.Parallel()
	sixPerMinute, _ := ParseRate("6/m")
	cases := []struct {
		name string
		st   Stats
		lim  Rate
		want float64
	}{
		{"too young to tell", Stats{AdmittedLastMinute: 5, MeasuredOver: 5 * time.Second}, Rate{}, 0},
		{"nothing admitted", Stats{MeasuredOver: time.Minute}, Rate{}, 0},
		{"a full minute", Stats{AdmittedLastMinute: 30, MeasuredOver: time.Minute}, Rate{}, 0.5},
		{"a young room", Stats{AdmittedLastMinute: 10, MeasuredOver: 20 * time.Second}, Rate{}, 0.5},
		{"capped by the bucket", Stats{AdmittedLastMinute: 12, MeasuredOver: 20 * time.Second}, sixPerMinute, 0.1},
	}
	for _, c := range cases {
		if got := admissionRate(&c.st, c.lim); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
