package config

import (
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// unknownKey finds the first key of the decoded document v that the
// configuration type t does not know, and returns its JSON pointer, its
// name and the keys known there; "" when every key is known.
func unknownKey(v any, t reflect.Type, ptr string) (at, name string, known []string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return "", "", nil
		}
		fields := map[string]reflect.Type{}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if tag == "" || tag == "-" {
				continue
			}
			fields[tag] = f.Type
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ft, ok := fields[k]
			if !ok {
				for name := range fields {
					known = append(known, name)
				}
				sort.Strings(known)
				return ptr + "/" + escapePointer(k), k, known
			}
			if at, name, known := unknownKey(m[k], ft, ptr+"/"+escapePointer(k)); at != "" {
				return at, name, known
			}
		}
	case reflect.Slice:
		list, ok := v.([]any)
		if !ok {
			return "", "", nil
		}
		for i, item := range list {
			if at, name, known := unknownKey(item, t.Elem(), ptr+"/"+strconv.Itoa(i)); at != "" {
				return at, name, known
			}
		}
	}
	return "", "", nil
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
