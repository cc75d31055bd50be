package matchers

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/onsi/gomega/types"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/driver/record"
)

// Matchers and helpers of the data-model areas (tables, entities, types, limits, auth).

// OutcomeOf renders what a call answered, for recording a MAY rule's choice: "success",
// "400 InvalidInput", or "transport error".
func OutcomeOf(err error) string {
	if err == nil {
		return "success"
	}
	if e, ok := driver.AsError(err); ok {
		return fmt.Sprintf("%d %s", e.Status, e.Code)
	}
	if m, ok := driver.AsMalformed(err); ok {
		return fmt.Sprintf("%d with an unreadable answer", m.Status)
	}
	return "transport error"
}

// HaveFailedAs succeeds when the actual error is a service error carrying the status and the
// code of one of the documented errors, e.g. HaveFailedAs(spec.ErrTableAlreadyExists).
func HaveFailedAs(errs ...spec.ErrorCode) types.GomegaMatcher {
	parts := make([]string, len(errs))
	for i, c := range errs {
		parts[i] = fmt.Sprintf("%d %s", c.Status, c.Code)
	}
	return failingWith("HaveFailedAs", strings.Join(parts, " or "), func(e *driver.Error) bool {
		return slices.ContainsFunc(errs, func(c spec.ErrorCode) bool { return e.Status == c.Status && e.Code == c.Code })
	})
}

// HaveFailedWithStatus succeeds when the actual error is a service error whose HTTP status is
// one of statuses, whatever its code.
func HaveFailedWithStatus(statuses ...int) types.GomegaMatcher {
	parts := make([]string, len(statuses))
	for i, s := range statuses {
		parts[i] = fmt.Sprint(s)
	}
	return failingWith("HaveFailedWithStatus", "status "+strings.Join(parts, " or "), func(e *driver.Error) bool {
		return slices.Contains(statuses, e.Status)
	})
}

type haveProperty struct {
	name      string
	want      api.Value
	got       string
	roundTrip string // the round-trip rule the difference is a fault of, if any
}

// HaveProperty succeeds when an api.Entity holds the custom property name with the type and
// value of want (api.Value.Equal).
func HaveProperty(name string, want api.Value) types.GomegaMatcher {
	return &haveProperty{name: name, want: want}
}

func (m *haveProperty) Match(actual any) (bool, error) {
	e, ok := entityOf(actual)
	if !ok {
		return false, fmt.Errorf("HaveProperty expects api.Entity, got %T", actual)
	}
	v, present := e.Properties[m.name]
	if !present {
		m.got = "no such property"
		return false, nil
	}
	m.got = v.String()
	m.roundTrip = ""
	if rule, ok := valueRoundTripRule(m.want, v); ok && record.SentByRunningSpec(m.name, m.want) && !record.MayHaveBeenWrittenByRunningSpec(e.Key(), m.name, v) {
		m.roundTrip = rule
	}
	return v.Equal(m.want), nil
}

func (m *haveProperty) FailureMessage(any) string {
	return noteRoundTripFault(m.roundTrip, fmt.Sprintf("property %q: the rule expects %s, the entity that came back holds %s", m.name, m.want, m.got))
}

func (m *haveProperty) NegatedFailureMessage(any) string {
	return fmt.Sprintf("property %q: expected anything but %s", m.name, m.want)
}

type lackProperty struct{ name string }

// LackProperty succeeds when an api.Entity has no custom property name.
func LackProperty(name string) types.GomegaMatcher { return &lackProperty{name: name} }

func (m *lackProperty) Match(actual any) (bool, error) {
	e, ok := entityOf(actual)
	if !ok {
		return false, fmt.Errorf("LackProperty expects api.Entity, got %T", actual)
	}
	_, present := e.Properties[m.name]
	return !present, nil
}

func (m *lackProperty) FailureMessage(actual any) string {
	e, _ := entityOf(actual)
	return fmt.Sprintf("the rule expects the entity to have no property %q, but it came back as %s", m.name, e)
}

func (m *lackProperty) NegatedFailureMessage(actual any) string {
	e, _ := entityOf(actual)
	return fmt.Sprintf("the rule expects the entity to have a property %q, but it came back as %s", m.name, e)
}

func entityOf(actual any) (api.Entity, bool) {
	switch e := actual.(type) {
	case api.Entity:
		return e, true
	case *api.Entity:
		if e != nil {
			return *e, true
		}
	}
	return api.Entity{}, false
}

// ResponseOutcome reads the status and the error code of a raw HTTP answer: the
// x-ms-error-code header, else the code of a JSON odata.error or XML error body. It leaves
// resp.Body readable from the start.
func ResponseOutcome(resp *http.Response) (status int, code string) {
	if resp == nil {
		return 0, ""
	}
	code = resp.Header.Get("x-ms-error-code")
	if code != "" || resp.Body == nil {
		return resp.StatusCode, code
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var js struct {
		Err struct {
			Code string `json:"code"`
		} `json:"odata.error"`
	}
	if json.Unmarshal(body, &js) == nil && js.Err.Code != "" {
		return resp.StatusCode, js.Err.Code
	}
	var x struct {
		Code string `xml:"code"`
		Cap  string `xml:"Code"`
	}
	if xml.Unmarshal(body, &x) == nil {
		if x.Code != "" {
			return resp.StatusCode, x.Code
		}
		return resp.StatusCode, x.Cap
	}
	return resp.StatusCode, ""
}

type answered struct {
	statuses []int
	codes    []string
}

// HaveAnswered succeeds when a raw *http.Response has one of the statuses and, when codes
// are given, one of the error codes (see ResponseOutcome).
func HaveAnswered(statuses []int, codes ...string) types.GomegaMatcher {
	return &answered{statuses: statuses, codes: codes}
}

func (m *answered) Match(actual any) (bool, error) {
	resp, ok := actual.(*http.Response)
	if !ok || resp == nil {
		return false, fmt.Errorf("HaveAnswered expects a non-nil *http.Response, got %T", actual)
	}
	status, code := ResponseOutcome(resp)
	if !slices.Contains(m.statuses, status) {
		return false, nil
	}
	return len(m.codes) == 0 || slices.Contains(m.codes, code), nil
}

func (m *answered) want() string {
	parts := make([]string, len(m.statuses))
	for i, s := range m.statuses {
		parts[i] = fmt.Sprint(s)
	}
	w := strings.Join(parts, " or ")
	if len(m.codes) > 0 {
		w += " with code " + strings.Join(m.codes, " or ")
	}
	return w
}

func (m *answered) FailureMessage(actual any) string {
	resp, _ := actual.(*http.Response)
	status, code := ResponseOutcome(resp)
	sent := ""
	if resp != nil && resp.Request != nil {
		sent = fmt.Sprintf(" to %s %s", resp.Request.Method, resp.Request.URL.Path)
	}
	return fmt.Sprintf("the rule expects the answer%s to be %s, but it was %d %q [request id %s]",
		sent, m.want(), status, code, resp.Header.Get("x-ms-request-id"))
}

func (m *answered) NegatedFailureMessage(actual any) string {
	resp, _ := actual.(*http.Response)
	status, code := ResponseOutcome(resp)
	return fmt.Sprintf("the rule expects the answer not to be %s, but it was %d %q", m.want(), status, code)
}
