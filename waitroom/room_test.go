package waitroom

import (
	"strings"
	"testing"
	"time"
)

func TestRoomConfig_Build(t *testing.T) {
	t.Parallel()
	c := DefaultRoom()
	c.AdmitRate = "300/m"
	r, err := c.Build("concert")
	if err != nil {
		t.Fatal(err)
	}
	want := Limits{MaxActive: 100, AdmitRate: Rate{300, time.Minute}, AdmitBurst: 5, SessionTTL: 10 * time.Minute,
		AbandonAfter: 2 * time.Minute, RecoveryGrace: 2 * time.Minute, JoinLimit: Rate{300, time.Minute}, SessionClients: 2, SessionMax: time.Hour, MaxSockets: 8}
	if r.Limits != want || r.Tick != time.Second || r.Name != "concert" || r.PreflightLimit != (Rate{60, time.Minute}) {
		t.Fatalf("built %+v, want limits %+v", r, want)
	}
	c.RecoveryGrace = "0s"
	if r, _ := c.Build("concert"); r.Limits.RecoveryGrace != 0 {
		t.Fatalf("recovery_grace 0s must disable the grace, got %v", r.Limits.RecoveryGrace)
	}
	c.SessionMax = "0s"
	if r, err := c.Build("concert"); err != nil || r.Limits.SessionMax != 0 {
		t.Fatalf("session_max 0s must turn the cap off, got %v, %v", r.Limits.SessionMax, err)
	}
}

func TestRoomConfig_Problems(t *testing.T) {
	t.Parallel()
	c := RoomConfig{MaxActive: -1, AdmitRate: "fast", AdmitBurst: -2, SessionTTL: "0s", AbandonAfter: "90",
		Tick: "soon", StatusCode: 500, RecoveryGrace: "-1s"}
	_, err := c.Build("concert")
	if err == nil {
		t.Fatal("a bad room passed")
	}
	for _, key := range []string{"max_active:", "admit_rate:", "admit_burst:", "session_ttl:", "abandon_after:", "tick:", "status_code:", "recovery_grace:"} {
		if !strings.Contains(err.Error(), key) {
			t.Errorf("problems do not name %s:\n%v", key, err)
		}
	}
}
