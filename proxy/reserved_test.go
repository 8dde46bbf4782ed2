package proxy

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// A client must not be able to speak for the gate: no spelling of the
// gate's headers reaches the site, and "Connection:" cannot remove them.
func TestUpstream_ReservedHeadersCannotBeSpoofedOrStripped(t *testing.T) {
	t.Parallel()
	var got http.Header
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
	}))
	t.Cleanup(up.Close)
	srv := httptest.NewServer(newUpstream(t, "shop", up.URL, Options{DropHeaders: []string{"X-Staff-Pass"}}))
	t.Cleanup(srv.Close)

	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/x", nil)
	req.Header["Waitroom_Visitor"] = []string{"spoof"}
	req.Header["Waitroom.Room"] = []string{"spoof"}
	req.Header["WAITROOM_TOKEN"] = []string{"spoof"}
	req.Header["X_staff_pass"] = []string{"secret-secret-secret"}
	req.Header.Set("Connection", "keep-alive, Waitroom-Visitor, Waitroom-Room")
	// What the gate sets on an admitted request:
	req.Header.Set(VisitorHeader, "v-1")
	req.Header.Set(RoomHeader, "concert")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for k := range got {
		if isReserved(k, []string{VisitorHeader, RoomHeader, TokenHeader, "X-Staff-Pass"}) && k != VisitorHeader && k != RoomHeader {
			t.Errorf("the site received %q: %q", k, got[k])
		}
	}
	if got.Get(VisitorHeader) != "v-1" || got.Get(RoomHeader) != "concert" {
		t.Fatalf("the gate's headers were lost: visitor %q room %q", got.Get(VisitorHeader), got.Get(RoomHeader))
	}
}

func TestIsReserved(t *testing.T) {
	t.Parallel()
	names := []string{VisitorHeader}
	for k, want := range map[string]bool{
		"Waitroom-Visitor": true, "waitroom_visitor": true, "WAITROOM.VISITOR": true, "Waitroom_Visitor": true,
		"Waitroom-Visitors": false, "Waitroom-Room": false, "": false, "Xaitroom-Visitor": false,
	} {
		if isReserved(k, names) != want {
			t.Errorf("isReserved(%q) = %v", k, !want)
		}
	}
}
