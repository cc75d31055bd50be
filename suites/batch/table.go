package batch

import (
	"context"
	"fmt"
	"reflect"

	"github.com/tableconform/conform/suites/framework"
)

// tableEntry is one case of a table of specs: its name completes the table's text.
type tableEntry struct {
	name string
	args []any
}

// entry names one case of a table of specs and its parameters.
func entry(name string, args ...any) tableEntry { return tableEntry{name: name, args: args} }

// describeTable declares one spec of rule ruleID per entry, named text + " " + the entry's
// name; body's first parameter is a context.Context, the rest take the entry's parameters.
// It declares plain specs through f.It, so that every case keeps the spec timeout.
func describeTable(f *framework.F, ruleID, text string, body any, entries ...tableEntry) {
	bv := reflect.ValueOf(body)
	bt := bv.Type()
	if bt.Kind() != reflect.Func || bt.NumIn() == 0 || bt.In(0) != reflect.TypeOf((*context.Context)(nil)).Elem() {
		panic(fmt.Sprintf("describeTable %q: body must be func(context.Context, ...)", text))
	}
	for _, e := range entries {
		if len(e.args) != bt.NumIn()-1 {
			panic(fmt.Sprintf("describeTable %q, entry %q: %d parameters for a body of %d", text, e.name, len(e.args), bt.NumIn()-1))
		}
		args := make([]reflect.Value, 0, len(e.args)+1)
		args = append(args, reflect.Value{})
		for i, a := range e.args {
			if a == nil {
				args = append(args, reflect.Zero(bt.In(i+1)))
			} else {
				args = append(args, reflect.ValueOf(a))
			}
		}
		f.It(ruleID, text+" "+e.name, func(ctx context.Context) {
			call := append([]reflect.Value(nil), args...)
			call[0] = reflect.ValueOf(&ctx).Elem()
			bv.Call(call)
		})
	}
}
