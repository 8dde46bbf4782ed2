package waitroom

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/waitroom/challenge"
)

// The bit tables of docs/challenge.md are computed from the code's
// defaults, not written by hand: this test renders them from DefaultRoom
// and wants them in the page as they are. After changing a default, run
// it with -v and paste what it prints.
func TestChallengeDocs_TablesFromDefaults(t *testing.T) {
	doc, err := os.ReadFile("../docs/challenge.md")
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultRoom()
	cfg.Challenge = ChallengePoW
	room, err := cfg.Build("docs")
	if err != nil {
		t.Fatal(err)
	}
	p, join := *room.Challenge, room.Limits.JoinLimit
	for _, table := range []string{bitsTable(p, join), costTable(p, join)} {
		t.Log("\n" + table)
		if !strings.Contains(string(doc), table) {
			t.Errorf("docs/challenge.md lacks this table, computed from the defaults:\n%s", table)
		}
	}
}

// docRows are the networks the bit table shows: how many tickets each
// runs ahead of its join_limit pace.
func docRows(p challenge.Policy, join Rate) []struct {
	who    string
	lo, hi int
} {
	n := int(join.N)
	return []struct {
		who    string
		lo, hi int
	}{
		{"one person, a household, a small office", 1, p.Free},
		{"a PC-bang at a sale", 2 * p.Free, 2 * p.Free},
		{"a campus or carrier NAT", 4 * p.Free, 4 * p.Free},
		{"`join_limit` at once", n, n},
		{"the ceiling: `join_limit` × " + strconv.Itoa(ChallengeJoinFactor), ChallengeJoinFactor * n, ChallengeJoinFactor * n},
	}
}

// bitsTable is the table of bits per network, without the line's pressure.
func bitsTable(p challenge.Policy, join Rate) string {
	var b strings.Builder
	b.WriteString("| who | places ahead of the network's `join_limit` pace | bits | work per place |\n| --- | --- | --- | --- |\n")
	for _, r := range docRows(p, join) {
		bits := p.Bits(challenge.Load{Recent: r.hi})
		span := strconv.Itoa(r.hi)
		if r.lo != r.hi {
			span = fmt.Sprintf("%d–%d", r.lo, r.hi)
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %s × |\n", r.who, span, bits, thousands(1<<(bits-p.Base)))
	}
	fmt.Fprintf(&b, "| past the ceiling | more than %d | — | `429`, no number |\n", ChallengeJoinFactor*int(join.N))
	return b.String()
}

// costTable is what each of the bit table's bits costs, and the most the
// line's pressure can add, at the rates measured below it in the page.
func costTable(p challenge.Policy, join Rate) string {
	rates := []float64{40e3, 200e3, 2e6, 8e6}
	var b strings.Builder
	b.WriteString("| bits | expected attempts | phone browser (WebCrypto, ~40 k/s) | desktop browser (WebCrypto, ~200 k/s) | desktop browser (JS midstate, ~2 M/s) | one native core (~8 M/s) |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- |\n")
	seen := map[int]bool{}
	var all []int
	for _, r := range docRows(p, join) {
		all = append(all, p.Bits(challenge.Load{Recent: r.hi}))
	}
	all = append(all, p.Bits(challenge.Load{Recent: ChallengeJoinFactor * int(join.N), Pressure: math.Inf(1)}), p.Max)
	for _, bits := range all {
		if seen[bits] {
			continue
		}
		seen[bits] = true
		attempts := 1 << bits
		fmt.Fprintf(&b, "| %d | %s |", bits, thousands(attempts))
		for _, rate := range rates {
			fmt.Fprintf(&b, " %s |", seconds(float64(attempts)/rate))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// thousands writes n with a space every three digits, as the page does.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + " " + s[i:]
	}
	return s
}

// seconds rounds a time for a reader: milliseconds, two figures of
// seconds, whole seconds, or minutes.
func seconds(s float64) string {
	switch {
	case s < 0.1:
		return fmt.Sprintf("%.0f ms", s*1000)
	case s < 10:
		return strconv.FormatFloat(s, 'g', 2, 64) + " s"
	case s < 120:
		return fmt.Sprintf("%.0f s", s)
	}
	return fmt.Sprintf("%.0f min", s/60)
}
