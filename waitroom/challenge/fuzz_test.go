package challenge

import (
	"strings"
	"testing"
	"time"
)

// FuzzCheck feeds Check any header, room and network. It must not panic,
// and it may accept only a prefix this test signed, for its room and
// network, with the work done.
func FuzzCheck(f *testing.F) {
	is := testIssuer(f)
	signed := map[string]Challenge{}
	var seeds []string
	// Fixed IDs: the fuzzing workers each run this function and must sign
	// the same prefixes as the coordinator that hands them the seeds.
	for i, c := range []Challenge{sample(), {Room: "concert", Network: testNetwork, Bits: 0, Issued: t0, Expires: t0.Add(time.Hour)}} {
		c.ID = ID{byte(i + 1)}
		prefix := is.Issue(c)
		got, err := is.Check(prefix+":"+Solve(prefix, c.Bits), c.Room, c.Network, t0)
		if err != nil {
			f.Fatal(err)
		}
		signed[prefix] = got
		seeds = append(seeds, prefix+":"+Solve(prefix, c.Bits), prefix+":x", prefix[:50]+":0", prefix+"A:0")
	}
	other := testIssuer(f, "another secret").Issue(sample())
	seeds = append(seeds, other+":"+Solve(other, 8), "", ":", "a:b", strings.Repeat("A", 300)+":0", "AQ:0")
	for _, s := range seeds {
		f.Add(s, "concert", testNetwork)
	}
	f.Add(seeds[0], "festival", testNetwork)
	f.Add(seeds[0], "concert", "198.51.100.0/24")
	f.Fuzz(func(t *testing.T, header, room, network string) {
		c, err := is.Check(header, room, network, t0)
		if err != nil {
			if c != (Challenge{}) {
				t.Fatalf("refused with %v, yet returned %+v", err, c)
			}
			if Result(err) == "error" {
				t.Fatalf("an error without a label: %v", err)
			}
			return
		}
		prefix, nonce, _ := strings.Cut(header, ":")
		want, ok := signed[prefix]
		if !ok {
			t.Fatalf("accepted a prefix nobody signed: %q", header)
		}
		if c != want || room != want.Room || network != want.Network || WorkBits(prefix, nonce) < c.Bits {
			t.Fatalf("accepted %q for %q/%q as %+v", header, room, network, c)
		}
	})
}
