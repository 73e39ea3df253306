package gcfg

import (
	"math/big"
	"reflect"
	"testing"
)

// strata: the defaults of a subsection are deep-copied into each new
// subsection (deepCopy replaced a round trip through encoding/gob).
func TestReadStringIntoSubsectDefaultsNotShared(t *testing.T) {
	type sub struct {
		Color  string
		Multi  []string
		Ptr    *string
		Big    big.Int
		hidden string
	}
	red := "red"
	res := &struct {
		Default_Profile sub
		Profile         map[string]*sub
	}{Default_Profile: sub{Color: "green", Multi: []string{"a"}, Ptr: &red, hidden: "h"}}
	res.Default_Profile.Big.SetInt64(7)
	cfg := "[profile \"one\"]\nmulti = b\n[profile \"two\"]\ncolor = blue\n"
	if err := ReadStringInto(res, cfg); err != nil {
		t.Fatal(err)
	}
	one, two := res.Profile["one"], res.Profile["two"]
	if one.Color != "green" || two.Color != "blue" {
		t.Errorf("colors %q %q", one.Color, two.Color)
	}
	if !reflect.DeepEqual(one.Multi, []string{"a", "b"}) || !reflect.DeepEqual(two.Multi, []string{"a"}) {
		t.Errorf("multi %q %q", one.Multi, two.Multi)
	}
	if !reflect.DeepEqual(res.Default_Profile.Multi, []string{"a"}) {
		t.Errorf("default changed: %q", res.Default_Profile.Multi)
	}
	if one.Ptr == res.Default_Profile.Ptr || *one.Ptr != "red" {
		t.Errorf("pointer shared or lost")
	}
	if one.Big.Int64() != 7 {
		t.Errorf("big %v", &one.Big)
	}
}
