package schedule

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The cron parser (robfig/cron) is the authority on what an expression
// means, but its errors do not say which field they concern, and it
// panics on some input (a TZ= prefix without a space after it). So an
// expression is first checked here, field by field, with the parser's
// own rules, and reaches the parser only once it passes; a *SpecError
// then names the field and the value.

// cronField is one of the five fields: its name and the values it takes.
type cronField struct {
	name     string
	min, max int
	names    []string // names[i] is value min+i, lower case (months, days)
}

// cronFields returns the five fields in order.
func cronFields() [5]cronField {
	return [5]cronField{
		{name: "minute", min: 0, max: 59},
		{name: "hour", min: 0, max: 23},
		{name: "day of month", min: 1, max: 31},
		{name: "month", min: 1, max: 12,
			names: []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}},
		{name: "day of week", min: 0, max: 6, names: []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}},
	}
}

// descriptors are the cron descriptors a Spec takes.
func isDescriptor(s string) bool {
	switch s {
	case "@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly":
		return true
	}
	return false
}

// checkCron checks expr and returns it with its fields separated by one
// space.
func checkCron(expr string) (string, error) {
	if len(expr) > MaxCronLen {
		return "", specError("cron", "the expression is longer than %d bytes", MaxCronLen)
	}
	fields := strings.Fields(expr)
	switch {
	case len(fields) == 0:
		return "", specError("cron", "the expression is blank")
	case strings.HasPrefix(fields[0], "TZ=") || strings.HasPrefix(fields[0], "CRON_TZ="):
		return "", specError("cron", "give the time zone apart, not as %s in the expression", fields[0])
	case fields[0] == "@every":
		return "", specError("cron", "@every is not taken: give an interval instead of a cron expression")
	case strings.HasPrefix(fields[0], "@"):
		if len(fields) != 1 || !isDescriptor(fields[0]) {
			return "", specError("cron", "unknown descriptor %q (use @yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly)",
				strings.Join(fields, " "))
		}
		return fields[0], nil
	case len(fields) != 5:
		return "", specError("cron", "%d fields, want 5: minute, hour, day of month, month, day of week", len(fields))
	}
	for i, f := range cronFields() {
		if msg := f.check(fields[i]); msg != "" {
			return "", &SpecError{Field: i + 1, Name: f.name, Msg: msg}
		}
	}
	return strings.Join(fields, " "), nil
}

// check checks one field, a comma-separated list of ranges, and returns
// what is wrong, or "".
func (f cronField) check(field string) string {
	for _, item := range strings.Split(field, ",") {
		if item == "" {
			return fmt.Sprintf("%q has an empty list item", field)
		}
		if msg := f.checkRange(item); msg != "" {
			return msg
		}
	}
	return ""
}

// checkRange checks one item: * or ?, a value, or a range low-high, each
// with an optional /step.
func (f cronField) checkRange(item string) string {
	rng, step, hasStep := strings.Cut(item, "/")
	if hasStep {
		if strings.Contains(step, "/") {
			return fmt.Sprintf("%q has more than one /", item)
		}
		if n, ok := number(step); !ok || n == 0 || n == math.MaxInt {
			return fmt.Sprintf("step %q in %q is not a positive number", step, item)
		}
	}
	if rng == "*" || rng == "?" {
		return ""
	}
	low, high, isRange := strings.Cut(rng, "-")
	lo, msg := f.value(low, item)
	if msg != "" {
		return msg
	}
	if !isRange {
		return ""
	}
	if strings.Contains(high, "-") {
		return fmt.Sprintf("%q has more than one -", item)
	}
	hi, msg := f.value(high, item)
	switch {
	case msg != "":
		return msg
	case lo > hi:
		return fmt.Sprintf("range %s goes backwards", rng)
	}
	return ""
}

// value parses one value of the field, a number or a name, in item.
func (f cronField) value(s, item string) (int, string) {
	if n, ok := number(s); ok {
		if n < f.min || n > f.max {
			return 0, fmt.Sprintf("%s out of range %d-%d", s, f.min, f.max)
		}
		return n, ""
	}
	for i, name := range f.names {
		if strings.EqualFold(s, name) {
			return f.min + i, ""
		}
	}
	switch {
	case s == "":
		return 0, fmt.Sprintf("%q has a range with a missing end", item)
	case s == "*" || s == "?":
		return 0, fmt.Sprintf("%q: * stands alone, not in a range", item)
	case f.names != nil:
		return 0, fmt.Sprintf("%q is neither a number nor a name (%s-%s)", s, f.names[0], f.names[len(f.names)-1])
	}
	return 0, fmt.Sprintf("%q is not a number", s)
}

// number parses s if it is decimal digits only (no sign), as the parser
// wants them; ok is false otherwise. Digits too many for an int are
// math.MaxInt (out of every field's range), which the parser, which
// cannot read them, must not see as a step: checkRange refuses it.
func number(s string) (n int, ok bool) {
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return math.MaxInt, true
	}
	return n, true
}
