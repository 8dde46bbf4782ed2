package challenge_test

import (
	"fmt"
	"time"

	"github.com/waitroom/waitroom/waitroom/challenge"
)

// The gate issues a challenge with the ticket number it took, the client
// solves it, and the gate checks the answer and spends its ID.
func Example() {
	is, err := challenge.New(challenge.DeriveKey([]byte("the cookie hash key"), "challenge"))
	if err != nil {
		panic(err)
	}
	now := time.Now()
	bits := challenge.DefaultPolicy().Bits(challenge.Load{Recent: 1})
	prefix := is.Issue(challenge.Challenge{Room: "concert", Network: "203.0.113.0/24", Number: 1042,
		Bits: bits, Issued: now, Expires: now.Add(5 * time.Minute)})

	nonce := challenge.Solve(prefix, bits) // the client's part
	c, err := is.Check(prefix+":"+nonce, "concert", "203.0.113.0/24", time.Now())
	fmt.Println(c.Number, c.Bits, challenge.Result(err))
	// Output: 1042 14 ok
}
