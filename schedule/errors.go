package schedule

import "errors"

// ErrInvalid is wrapped by every error this package returns for input
// that breaks its rules (a *SpecError, a policy, an id, a backfill
// range): the API answers InvalidArgument for it. Retrying does not help.
var ErrInvalid = errors.New("schedule: invalid")
