package scenario

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

func TestFilterBuilders(t *testing.T) {
	for got, want := range map[string]string{
		Quote("O'Brien"):                    `'O''Brien'`,
		Cmp("RowKey", "ge", "empid_000100"): `RowKey ge 'empid_000100'`,
		And("A eq 1", Cmp("B", "lt", "x")):  `(A eq 1) and (B lt 'x')`,
		And():                               ``,
	} {
		if got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
}

func TestEntityBuilders(t *testing.T) {
	e := Entity("p", "r", "N", api.Int32(1), "S", api.String("x"))
	if e.Key() != Key("p", "r") || len(e.Properties) != 2 || !e.Properties["S"].Equal(api.String("x")) {
		t.Errorf("Entity = %s", e)
	}
	e.ETag = `W/"1"`
	s := Strip(e)
	s.Properties["N"] = api.Int32(2)
	if s.ETag != "" || !e.Properties["N"].Equal(api.Int32(1)) {
		t.Errorf("Strip kept the ETag or shares properties: %+v, original %s", s, e)
	}
	sorted := SortByKey([]api.Entity{Entity("b", "1"), Entity("a", "2"), Entity("a", "1")})
	if got := fmt.Sprint(sorted[0].Key(), sorted[1].Key(), sorted[2].Key()); got != "{a 1} {a 2} {b 1}" {
		t.Errorf("SortByKey order = %s", got)
	}
}

func TestIsStatus(t *testing.T) {
	err := fmt.Errorf("wrapped: %w", spec.ErrEntityNotFound.New())
	if !IsStatus(err, 404) || IsStatus(err, 409) || IsStatus(errors.New("transport"), 404) || IsStatus(nil, 404) {
		t.Error("IsStatus does not read the service error's status")
	}
}

// recorder is the part of api.Backend that the writes call.
type recorder struct {
	api.Backend
	calls []string
}

func (r *recorder) InsertEntity(_ context.Context, table string, e api.Entity) (api.Entity, error) {
	r.calls = append(r.calls, "insert "+table)
	e.ETag = "i"
	return e, nil
}

func (r *recorder) UpdateEntity(_ context.Context, table string, _ api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	r.calls = append(r.calls, fmt.Sprintf("%s %s if-match %q", mode, table, ifMatch))
	return "u", nil
}

func TestWritesCallTheirOperation(t *testing.T) {
	r := &recorder{}
	var names []string
	for _, w := range AllWrites() {
		etag, err := w.Do(context.Background(), r, "t", Entity("p", "r"))
		if err != nil || etag == "" {
			t.Errorf("%s: etag %q, err %v", w.Name, etag, err)
		}
		names = append(names, fmt.Sprintf("%s existing=%v", w.Name, w.Existing))
	}
	want := fmt.Sprint([]string{"insert t",
		fmt.Sprintf("%s t if-match %q", api.Replace, api.IfMatchAny), fmt.Sprintf("%s t if-match %q", api.Merge, api.IfMatchAny),
		fmt.Sprintf("%s t if-match %q", api.Replace, ""), fmt.Sprintf("%s t if-match %q", api.Merge, "")})
	if got := fmt.Sprint(r.calls); got != want {
		t.Errorf("calls = %s\nwant %s", got, want)
	}
	if got := fmt.Sprint(names); got != "[Insert Entity existing=false Update Entity existing=true Merge Entity existing=true Insert Or Replace Entity existing=false Insert Or Merge Entity existing=false]" {
		t.Errorf("writes = %s", got)
	}
}
