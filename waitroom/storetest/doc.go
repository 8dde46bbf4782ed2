// Package storetest holds the invariants every waitroom.Store must keep, as
// one suite that each implementation runs from its own tests:
//
//	func TestMemStore(t *testing.T) {
//		storetest.Run(t, func(tb testing.TB, n int) []waitroom.Store { ... })
//	}
//
// The suite checks the DESIGN invariants — capacity, the token bucket, ticket
// order, idempotent joins, immediate admission, abandonment, release, expiry,
// sliding renewal, restore after data loss and the recovery grace that
// follows it, and the balance of the stats — with one instance and with
// three sharing one backend, as gateways share one Redis. It also holds the
// stores to the runtime side of the contract: overrides shared by every
// instance, merged and cleared; AdmitN within max_active and without
// tokens; random admission (Limits.Random) that reaches everyone once, out
// of ticket order, within the same limits; the modes of
// waitroom.Override.Apply as a store sees them; and rooms as data: a
// template's rooms in use capped across instances (UseRoom), rooms with
// an Idle forgotten when nobody uses them but for their override, and the
// definitions with their version, the same from every instance.
//
// It runs on real time only, since a shared backend keeps its own clock:
// TTLs are a few hundred milliseconds, upper bounds (max_active, the bucket)
// are asserted exactly, and anything that must happen eventually gets a
// generous deadline. Where an assertion would follow from the contract only
// if the test process was not stalled for longer than a TTL, the test
// measures that and skips with the stall named instead of failing.
package storetest
