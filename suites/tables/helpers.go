package tables

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
)

// maxTablePages bounds the pages one Query Tables walk may take: the specs' prefixes match
// at most a handful of tables, so more pages than this means the continuation never ends.
const maxTablePages = 32

// createOwned creates name and, when the create succeeds, deletes it when the spec ends.
// Names with the run's prefix go through f.CleanupTable; the few names a boundary forces
// outside the prefix are deleted by their exact name, and only because this spec created
// them.
func createOwned(ctx context.Context, f *framework.F, name string) error {
	GinkgoHelper()
	b := f.Backend()
	err := b.CreateTable(ctx, name)
	if err != nil {
		return err
	}
	if framework.IsThisRunsTable(name) {
		f.CleanupTable(name)
		return nil
	}
	DeferCleanup(func(ctx SpecContext) {
		if err := f.Backend().DeleteTable(ctx, name); err != nil {
			GinkgoWriter.Printf("delete table %q created by this spec: %v\n", name, err)
		}
	})
	return nil
}

// newTables creates one table per suffix under a fresh prefix that no other spec uses and
// returns the prefix and the names, in suffix order.
func newTables(ctx context.Context, f *framework.F, suffixes ...string) (string, []string) {
	GinkgoHelper()
	prefix := f.TableName() + "x"
	names := make([]string, len(suffixes))
	for i, s := range suffixes {
		names[i] = prefix + s
		Expect(createOwned(ctx, f, names[i])).To(SucceedOnBackend(), "create table %s", names[i])
	}
	return prefix, names
}

// prefixFilter selects the tables whose names start with prefix ('{' follows every ASCII
// letter and digit).
func prefixFilter(prefix string) string {
	return fmt.Sprintf("TableName ge '%s' and TableName lt '%s{'", prefix, prefix)
}

// walkTables follows NextTableName from q until a page comes without one. It fails the spec
// when a page holds more than q.Top tables (q.Top > 0), or when the walk does not end
// within maxTablePages pages.
func walkTables(ctx context.Context, b api.Backend, q api.TableQuery) (names []string, pages []api.TablePage) {
	GinkgoHelper()
	for len(pages) < maxTablePages {
		page, err := b.QueryTables(ctx, q)
		Expect(err).To(SucceedOnBackend(), "Query Tables %+v", q)
		if q.Top > 0 {
			Expect(len(page.Tables)).To(BeNumerically("<=", q.Top),
				"a page of Query Tables with $top=%d held %d tables: %v", q.Top, len(page.Tables), page.Tables)
		}
		pages = append(pages, page)
		names = append(names, page.Tables...)
		if page.NextTableName == "" {
			return names, pages
		}
		q.NextTableName = page.NextTableName
	}
	Fail(fmt.Sprintf("Query Tables %q still returned NextTableName after %d pages (tables so far: %v)", q.Filter, maxTablePages, names))
	return nil, nil
}

// listOwn returns the tables of a Query Tables for the prefix of name that are name, in
// any letter case, each as listed: a spec judges only the tables it created, as other
// processes of the run (or other clients of the account) create tables at the same time,
// and a listing that holds theirs says nothing about this spec's rule.
func listOwn(ctx context.Context, b api.Backend, name string) []string {
	GinkgoHelper()
	names, _ := walkTables(ctx, b, api.TableQuery{Filter: prefixFilter(name)})
	return ownTables(names, name)
}

// ownTables keeps the listed names that are one of created, compared without regard to
// letter case (table names are case-insensitive), in listing order and as listed, with
// their repeats.
func ownTables(listed []string, created ...string) []string {
	own := []string{}
	for _, n := range listed {
		for _, c := range created {
			if strings.EqualFold(n, c) {
				own = append(own, n)
				break
			}
		}
	}
	return own
}

// randomName returns a table name of n characters (n >= 1): a letter, then letters and
// digits, drawn at random so that concurrent runs rarely meet.
func randomName(n int) string {
	const letters = "abcdefghijklmnopqrstuvwxyz"
	const alnum = letters + "0123456789"
	b := make([]byte, n)
	_, _ = rand.Read(b)
	out := make([]byte, n)
	out[0] = letters[int(b[0])%len(letters)]
	for i := 1; i < n; i++ {
		out[i] = alnum[int(b[i])%len(alnum)]
	}
	return string(out)
}

// padName pads a run-prefixed name with 'x' to exactly n characters.
func padName(name string, n int) string {
	GinkgoHelper()
	Expect(len(name)).To(BeNumerically("<=", n), "the run's table name %q is longer than %d", name, n)
	return name + strings.Repeat("x", n-len(name))
}
