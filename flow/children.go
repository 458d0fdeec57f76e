package flow

import "google.golang.org/protobuf/types/known/structpb"

// ChildResult is how a child handler ended.
type ChildResult struct {
	Status Status
	Result *structpb.Struct
	Error  string
}

// Children is where a set of children stands (StepContext.WaitForChildren).
type Children struct {
	Completed []string
	// Failed holds the children that failed or were cancelled.
	Failed  []string
	Pending []string
	Results map[string]ChildResult
}
