package storetest

import (
	"fmt"
	"testing"

	"github.com/waitroom/waitroom/waitroom"
)

// NewFunc returns n stores that share one fresh, empty backend, as n gateway
// instances share one Redis: a change made through one is seen by all. Each
// call must return a new backend that shares nothing with earlier ones; the
// restore test relies on it. The function registers the stores' cleanup with
// tb. An embedded store returns the same store n times.
type NewFunc func(tb testing.TB, n int) []waitroom.Store

// Run runs every invariant of the store contract against the stores
// newStores makes, with one instance and, where instances can disagree, with
// three. Subtests run in parallel, each on its own backend and room.
func Run(t *testing.T, newStores NewFunc) {
	run(t, newStores, false)
}

// RunUntimed runs the cases whose outcome does not hinge on this process's
// wall clock (see timed): for a second client of a store already run
// through Run (a Sentinel group, a Cluster with replicas, WAIT after
// writes), where the contract's timing is the same scripts' and was shown
// there, and where each extra run of a timed case on a busy machine is
// one more chance of an "inconclusive, the machine stalled" failure that
// proves nothing about the client.
func RunUntimed(t *testing.T, newStores NewFunc) {
	run(t, newStores, true)
}

// timed names the cases that measure real time against a TTL, a rate or a
// grace, and fail as inconclusive when the machine stalled past it.
var timed = map[string]bool{
	"TokenBucket": true, "Abandonment": true, "TouchKeepsPlaces": true, "TouchMarksMany": true, "Expiry": true,
	"SlidingRenewal": true, "RecoveryGrace": true, "ShortUntilUsed": true, "SessionClients": true,
	"SessionClientsQuiet": true, "AdmitNDropsStale": true, "AdmitNIsAnAdmission": true,
	"SocketEndsWithSession": true, "ChallengeLifetime": true, "UseRoomIdle": true,
	"IdleRoomForgotten": true, "AutopilotStart": true, "AutopilotStartNoFlap": true,
	"AutopilotNotice": true,
}

func run(t *testing.T, newStores NewFunc, untimed bool) {
	for _, tc := range cases {
		if untimed && timed[tc.name] {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, n := range tc.instances {
				t.Run(fmt.Sprintf("instances=%d", n), func(t *testing.T) {
					t.Parallel()
					for i := 1; ; i++ {
						s := attempt(func() { tc.run(t, newEnv(t, newStores, n)) })
						if s == nil {
							break
						}
						if i == stallAttempts {
							t.Fatalf("%s (%d times)", s.why, i)
						}
						t.Logf("attempt %d: %s; again on fresh backends", i, s.why)
					}
				})
			}
		})
	}
}

type testCase struct {
	name      string
	instances []int
	run       func(t *testing.T, e *env)
}

var (
	one  = []int{1}
	many = []int{1, 3}
)

// cases lists the subtests. The sequential ones run on several instances
// too, with each call going to the next instance, so a store that caches
// state per instance shows it.
var cases = []testCase{
	{"Capacity", many, testCapacity},
	{"Autopilot", many, testAutopilot},
	{"AutopilotMerges", many, testAutopilotMerges},
	{"AutopilotTimedOnly", many, testAutopilotTimedOnly},
	{"AutopilotBaseInUse", many, testAutopilotBaseInUse},
	{"AutopilotStart", many, testAutopilotStart},
	{"AutopilotStartNoFlap", many, testAutopilotStartNoFlap},
	{"AutopilotNotice", many, testAutopilotNotice},
	{"TokenBucket", many, testTokenBucket},
	{"FIFOOneSlot", many, func(t *testing.T, e *env) { testFIFO(t, e, 1) }},
	{"FIFOBatches", many, func(t *testing.T, e *env) { testFIFO(t, e, 3) }},
	{"IdempotentJoin", many, testIdempotentJoin},
	{"PositionsNeverWorsen", many, testPositionsNeverWorsen},
	{"ImmediateAdmission", many, testImmediateAdmission},
	{"Abandonment", many, testAbandonment},
	{"TouchKeepsPlaces", many, testTouchKeepsPlaces},
	{"TouchMarksMany", many, testTouchMarksMany},
	{"Progress", many, testProgress},
	{"Head", many, testHead},
	{"ProgressBoundsPosition", many, testProgressBoundsPosition},
	{"Release", many, testRelease},
	{"ReleaseAt", many, testReleaseAt},
	{"LeftTickets", many, testLeftTickets},
	{"Expiry", many, testExpiry},
	{"SlidingRenewal", many, testSlidingRenewal},
	{"Restore", many, testRestore},
	{"RecoveryGrace", many, testRecoveryGrace},
	{"ShortUntilUsed", many, testShortUntilUsed},
	{"SessionClients", many, testSessionClients},
	{"SessionClientsQuiet", many, testSessionClientsQuiet},
	{"RestoreInside", many, testRestoreInside},
	{"FullLossKnown", many, testFullLossKnown},
	{"CounterBehindKnown", many, testCounterBehindKnown},
	{"EndedSessionNotRestoredByRepair", many, testEndedSessionNotRestoredByRepair},
	{"Shuffle", many, testShuffle},
	{"ShuffleOnlyPrequeue", many, testShuffleOnlyPrequeue},
	{"UnknownWithoutJoin", one, testUnknownWithoutJoin},
	{"Conservation", many, testConservation},
	{"AdmittedLastMinute", many, testAdmittedLastMinute},
	{"Ping", many, testPing},
	{"Overrides", many, testOverrides},
	{"OverrideClear", many, testOverrideClear},
	{"OverrideRefused", one, testOverrideRefused},
	{"ModesThroughOverride", many, testModesThroughOverride},
	{"AdmitNCapacity", many, testAdmitNCapacity},
	{"AdmitHighest", many, testAdmitHighest},
	{"AdmitNIgnoresBucket", many, testAdmitNIgnoresBucket},
	{"AdmitNDropsStale", many, testAdmitNDropsStale},
	{"AdmitNIsAnAdmission", many, testAdmitNIsAnAdmission},
	{"RandomEveryoneOnce", many, testRandomEveryoneOnce},
	{"RandomBucket", many, testRandomBucket},
	{"RandomDuringGrace", many, testRandomDuringGrace},
	{"SocketsPerSession", many, testSocketsPerSession},
	{"SocketEndsWithSession", many, testSocketEndsWithSession},
	{"Allowance", many, testAllowance},
	{"JoinCeiling", many, testJoinCeiling},
	{"BlockCeiling", many, testBlockCeiling},
	{"FloodTakesNothing", many, testFloodTakesNothing},
	{"PendingBounds", many, testPendingBounds},
	{"ChallengeLifetime", many, testChallengeLifetime},
	{"UseRoomCap", many, testUseRoomCap},
	{"UseRoomIdle", many, testUseRoomIdle},
	{"UseRoomProbe", many, testUseRoomProbe},
	{"IdleRoomForgotten", many, testIdleRoomForgotten},
	{"Definitions", many, testDefinitions},
	{"DefinitionsAtOnce", many, testDefinitionsAtOnce},
	{"DefinitionBounds", one, testDefinitionBounds},
	{"BatchedOrder", many, testBatchedOrder},
	{"BatchedRelease", many, testBatchedRelease},
	{"BatchedIdempotent", many, testBatchedIdempotent},
	{"BatchedQuota", many, testBatchedQuota},
	{"BatchedLoose", many, testBatchedLoose},
	{"BatchedKnownMoves", many, testBatchedKnownMoves},
	{"BatchedAtOnce", many, testBatchedAtOnce},
	{"BatchedFarApart", many, testBatchedFarApart},
}
