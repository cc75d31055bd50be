package odata

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tableconform/conform/reference/spec"
)

// ParseTop parses a $top value: a decimal integer from 1 to spec.MaxTop (EVIDENCE.md 3.3).
// Anything else is InvalidInput with the service's generic message "One of the request
// inputs is not valid.", which live Storage answers for $top=-1 and $top=1001 (CloudStub
// TableClientQueryTests, live account). Note that the same source suggests $top=0 yields an
// empty result rather than an error (UNCERTAIN); the reference refuses it.
func ParseTop(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 || n > spec.MaxTop {
		return 0, spec.ErrInvalidInput.New()
	}
	return n, nil
}

// ParseSelect parses a $select value: a comma-separated list of property names, each
// trimmed of blanks (EVIDENCE.md 3.4). An empty value, or "*", selects every property and
// returns nil. Each name must be a valid property name (a letter or underscore, then
// letters, digits and underscores, at most spec.MaxPropertyNameLength characters); an empty
// item, an invalid name or more than spec.MaxSelectProperties names is InvalidInput. A name
// given twice is returned once, in the position of its first appearance.
func ParseSelect(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "*" {
		return nil, nil
	}
	items := strings.Split(s, ",")
	if len(items) > spec.MaxSelectProperties {
		return nil, spec.ErrInvalidInput.Newf("The $select option names more than %d properties.", spec.MaxSelectProperties)
	}
	names := make([]string, 0, len(items))
	seen := make(map[string]bool, len(items))
	for _, item := range items {
		name := strings.TrimSpace(item)
		if !validPropertyName(name) {
			return nil, spec.ErrInvalidInput.Newf("The $select option holds an invalid property name '%s'.", name)
		}
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	return names, nil
}

func validPropertyName(name string) bool {
	if name == "" || utf8.RuneCountInString(name) > spec.MaxPropertyNameLength {
		return false
	}
	for i, r := range name {
		if r == utf8.RuneError || (i == 0 && !isIdentStart(r)) || !isIdentPart(r) {
			return false
		}
	}
	return true
}
