package waitroom

// StoreState is the store's condition as /readyz's body and the operator's
// dashboard name it. The values are the dashboard API's words.
type StoreState string

const (
	// StoreOK: the store answers.
	StoreOK StoreState = "ok"
	// StoreFailingOver: the store has no master that takes writes for now
	// (a replica answers READONLY or MASTERDOWN, a Cluster CLUSTERDOWN, or
	// the master of a Sentinel group or Cluster does not answer): a
	// failover is under way, and visitors are held until it ends.
	StoreFailingOver StoreState = "failing_over"
	// StoreUnreachable: the store does not answer, or answers with errors.
	StoreUnreachable StoreState = "unreachable"
)
