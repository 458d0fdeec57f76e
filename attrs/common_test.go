package attrs_test

import (
	"math"
	"time"

	"github.com/wfd-dev/wfd/attrs"
)

// testSchema declares one attribute of each type (and a second string).
var testSchema = attrs.Schema{
	"customer": attrs.String,
	"region":   attrs.String,
	"tags":     attrs.KeywordList,
	"amount":   attrs.Int,
	"price":    attrs.Double,
	"vip":      attrs.Bool,
	"due":      attrs.Time,
}

// day is a day of January 2025, in UTC.
func day(d int) time.Time { return time.Date(2025, 1, d, 0, 0, 0, 0, time.UTC) }

func nan() float64 { return math.NaN() }
