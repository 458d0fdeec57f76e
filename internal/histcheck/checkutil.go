package histcheck

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// terminal says whether a status is final.
func terminal(s wfdv1.HandlerStatus) bool {
	return s != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING && s != wfdv1.HandlerStatus_HANDLER_STATUS_UNSPECIFIED
}

// answers says whether an approval handler's result is the one answer a
// carries: the workflow copies "approved" and "comment" into its result.
func answers(result map[string]any, a Answer) bool {
	approved, ok := result["approved"].(bool)
	return ok && approved == a.Approved && result["comment"] == a.Comment
}

// expired says whether an expense handler's result is its deadline's.
func expired(result map[string]any) bool {
	e, ok := result["expired"].(bool)
	return ok && e
}

func sameResult(a, b map[string]any) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}

func short(s wfdv1.HandlerStatus) string {
	return strings.TrimPrefix(s.String(), "HANDLER_STATUS_")
}

// rel is a time of the run as an offset from its start, as the summary
// and the nemesis log print times.
func rel(d Data, t time.Time) string {
	return fmt.Sprintf("+%.3fs", t.Sub(d.Start).Seconds())
}

func recText(r Rec) string {
	if !r.Terminal {
		return fmt.Sprintf("#%d %s", r.Seq, r.Kind)
	}
	s := fmt.Sprintf("#%d %s", r.Seq, strings.ToLower(short(r.Status)))
	if r.Result != nil {
		s += " " + mapText(r.Result)
	}
	if r.Error != "" {
		s += ": " + r.Error
	}
	return s
}

// mapText is a result as compact JSON, leaving out the approval
// workflow's copy of its input (which only makes evidence longer).
func mapText(m map[string]any) string {
	if _, ok := m["request"]; ok {
		c := make(map[string]any, len(m))
		for k, v := range m {
			if k != "request" {
				c[k] = v
			}
		}
		m = c
	}
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Sprint(m)
	}
	return string(b)
}

func answerText(a *Answer) string {
	if a == nil {
		return "none"
	}
	return fmt.Sprintf(`{"approved":%v,"comment":%q}`, a.Approved, a.Comment)
}
