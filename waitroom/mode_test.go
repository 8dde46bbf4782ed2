package waitroom

import (
	"testing"
	"time"
)

func TestOverride_Apply(t *testing.T) {
	t.Parallel()
	rate, _ := ParseRate("300/m")
	room := Room{Name: "r", Mode: ModeFIFO, Limits: Limits{MaxActive: 100, AdmitRate: rate, AdmitBurst: 5}}
	five, fast := 5, Rate{N: 600, Per: time.Minute}
	cases := []struct {
		o      Override
		max    int
		rate   string
		mode   Mode
		random bool
	}{
		{Override{}, 100, "300/m", ModeFIFO, false},
		{Override{MaxActive: &five}, 5, "300/m", ModeFIFO, false},
		{Override{AdmitRate: &fast}, 100, "600/m", ModeFIFO, false},
		{Override{Mode: ModePaused}, 0, "300/m", ModePaused, false},
		{Override{Mode: ModeReject, MaxActive: &five}, 0, "300/m", ModeReject, false},
		{Override{Mode: ModePassthrough}, passthroughMax, "unlimited", ModePassthrough, false},
		{Override{Mode: ModeRandom}, 100, "300/m", ModeRandom, true},
	}
	for _, c := range cases {
		lim, mode := c.o.Apply(room)
		if lim.MaxActive != c.max || lim.AdmitRate.String() != c.rate || mode != c.mode || lim.Random != c.random {
			t.Errorf("%+v: max %d rate %v mode %s random %v", c.o, lim.MaxActive, lim.AdmitRate, mode, lim.Random)
		}
	}
	if _, err := ParseMode("sideways"); err == nil {
		t.Error("ParseMode accepted a made-up mode")
	}
}

func TestHistory_KeepsTheLastSpanOnePointPerStep(t *testing.T) {
	t.Parallel()
	var h history
	start := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	n := int(HistorySpan/HistoryStep) + 5
	for i := range n {
		at := start.Add(time.Duration(i) * HistoryStep)
		h.add(at, &Stats{Waiting: int64(i)})
		h.add(at.Add(time.Second), &Stats{Waiting: -1}) // within the step: ignored
	}
	got := h.list()
	if len(got) != int(HistorySpan/HistoryStep) {
		t.Fatalf("%d samples, want %d", len(got), HistorySpan/HistoryStep)
	}
	for i, s := range got {
		if want := int64(i + 5); s.Waiting != want {
			t.Fatalf("sample %d: waiting %d, want %d (oldest first)", i, s.Waiting, want)
		}
	}
}
