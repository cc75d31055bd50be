package tables

import (
	"context"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
)

var _ = framework.Describe("Create Table", func(f *framework.F) {
	f.It("tables.create.listed", "creates the table and lists it in Query Tables", func(ctx context.Context) {
		b := f.Backend()
		name := f.TableName()
		Expect(createOwned(ctx, f, name)).To(SucceedOnBackend())
		Expect(listOwn(ctx, b, name)).To(Equal([]string{name}), "the tables named %q in Query Tables for that prefix", name)
	})

	Context("when the table already exists", func() {
		f.It("tables.create.conflict", "fails with 409 TableAlreadyExists", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			Expect(b.CreateTable(ctx, table)).To(HaveFailedAs(spec.ErrTableAlreadyExists))
		})
	})

	Context("when a table of the same name in another letter case exists", func() {
		f.DescribeTable("tables.name.case-insensitive", "fails with 409 TableAlreadyExists",
			func(ctx context.Context, created, again func(string) string) {
				base := f.TableName() + "Case"
				first := created(base)
				Expect(createOwned(ctx, f, first)).To(SucceedOnBackend())
				second := again(base)
				err := createOwned(ctx, f, second)
				f.Check(spec.CheckRefusal, func() {
					Expect(err).To(HaveFailedAs(spec.ErrTableAlreadyExists), "Create Table %q while %q exists", second, first)
				})
			},
			Entry("created in lower case, then in upper case", strings.ToLower, strings.ToUpper),
			Entry("created in mixed case, then in lower case", func(s string) string { return s }, strings.ToLower),
		)
	})

	Context("with upper-case letters in the name", func() {
		f.It("tables.name.case-preserved", "keeps the letter case in Query Tables", func(ctx context.Context) {
			b := f.Backend()
			name := f.TableName() + "MiXeDCase"
			Expect(createOwned(ctx, f, name)).To(SucceedOnBackend())
			f.Requires("tables.create.listed", "Query Tables for the prefix lists the created table once, in some letter case", func() {
				Expect(listOwn(ctx, b, name)).To(HaveLen(1), "the tables named %q in any case in Query Tables for that prefix", name)
			})
			Expect(listOwn(ctx, b, name)).To(Equal([]string{name}), "the tables named %q in Query Tables for that prefix", name)
		})
	})
})

var _ = framework.Describe("Table name case", func(f *framework.F) {
	Context("when a table is addressed in another letter case", func() {
		f.It("tables.name.case-insensitive-access", "inserts through one case and reads through the other", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			e := api.NewEntity("p", "r", map[string]api.Value{"V": api.Int32(1)})
			_, err := b.InsertEntity(ctx, strings.ToUpper(table), e)
			Expect(err).To(SucceedOnBackend(), "Insert Entity into %q", strings.ToUpper(table))
			got, err := b.GetEntity(ctx, table, "p", "r", nil)
			Expect(err).To(SucceedOnBackend(), "Get Entity from %q", table)
			Expect(got).To(MatchEntity(e))
		})
		f.It("tables.name.case-insensitive-access", "queries through another case", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			e := api.NewEntity("p", "r", map[string]api.Value{"V": api.Int32(1)})
			_, err := b.InsertEntity(ctx, table, e)
			Expect(err).To(SucceedOnBackend())
			page, err := b.QueryEntities(ctx, strings.ToUpper(table), api.Query{})
			Expect(err).To(SucceedOnBackend(), "Query Entities of %q", strings.ToUpper(table))
			Expect(page.Entities).To(HaveKeys(e.Key()))
		})
		f.It("tables.name.case-insensitive-access", "deletes the table through another case", func(ctx context.Context) {
			b := f.Backend()
			name := f.TableName()
			Expect(createOwned(ctx, f, name)).To(SucceedOnBackend())
			Expect(b.DeleteTable(ctx, strings.ToUpper(name))).To(SucceedOnBackend(), "Delete Table %q", strings.ToUpper(name))
			Expect(listOwn(ctx, b, name)).To(BeEmpty(), "the tables named %q in Query Tables after deleting it as %q", name, strings.ToUpper(name))
		})
	})
})

var _ = framework.Describe("Delete Table", func(f *framework.F) {
	Context("when the table exists", func() {
		f.It("tables.delete.removes", "removes the table from Query Tables", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			Expect(b.DeleteTable(ctx, table)).To(SucceedOnBackend())
			Expect(listOwn(ctx, b, table)).To(BeEmpty(), "the tables named %s in Query Tables after deleting it", table)
		})
		type op func(ctx context.Context, b api.Backend, table string) error
		f.DescribeTable("tables.delete.removes", "makes entity operations on it fail",
			func(ctx context.Context, do op) {
				b, table := f.Backend(), f.NewTable(ctx)
				_, err := b.InsertEntity(ctx, table, api.NewEntity("p", "r", nil))
				Expect(err).To(SucceedOnBackend())
				Expect(b.DeleteTable(ctx, table)).To(SucceedOnBackend())
				err = do(ctx, b, table)
				Expect(err).To(Or(HaveFailedWithStatus(404), HaveFailedAs(spec.ErrTableBeingDeleted)),
					"an entity operation on the deleted table %s", table)
				f.Choice("entity operation on a deleted table", OutcomeOf(err))
			},
			Entry("for Get Entity", op(func(ctx context.Context, b api.Backend, table string) error {
				_, err := b.GetEntity(ctx, table, "p", "r", nil)
				return err
			})),
			Entry("for Insert Entity", op(func(ctx context.Context, b api.Backend, table string) error {
				_, err := b.InsertEntity(ctx, table, api.NewEntity("p", "r2", nil))
				return err
			})),
			Entry("for Query Entities", op(func(ctx context.Context, b api.Backend, table string) error {
				_, err := b.QueryEntities(ctx, table, api.Query{})
				return err
			})),
		)
	})

	Context("when the table does not exist", func() {
		f.DescribeTable("tables.delete.not-found", "fails with 404 ResourceNotFound or TableNotFound",
			func(ctx context.Context, name nameFunc) {
				err := f.Backend().DeleteTable(ctx, name(f))
				Expect(err).To(HaveFailedAs(spec.ErrResourceNotFound, spec.ErrTableNotFound))
				f.Choice("code for deleting a missing table", OutcomeOf(err))
			},
			Entry("for a name never created", nameFunc(func(f *framework.F) string { return f.TableName() })),
			Entry("for a name of 63 characters never created", nameFunc(func(f *framework.F) string { return padName(f.TableName(), spec.MaxTableNameLength) })),
		)
	})

	Context("when the name of a just-deleted table is created again", func() {
		f.It("tables.delete.name-reuse", "succeeds, or fails with 409 TableBeingDeleted for a while", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			Expect(b.DeleteTable(ctx, table)).To(SucceedOnBackend())
			waited, err := f.WaitForDeletedName(ctx, b, table)
			if err != nil {
				Expect(err).To(HaveFailedAs(spec.ErrTableBeingDeleted), "Create Table %s right after deleting it", table)
				f.Choice("re-create a deleted name", "409 TableBeingDeleted for longer than "+f.NameReuseBound().String())
				return
			}
			if waited == 0 {
				f.Choice("re-create a deleted name", "success at once")
			} else {
				f.Choice("re-create a deleted name", "409 TableBeingDeleted, then success")
			}
		})
		f.It("tables.delete.fresh-on-reuse", "holds none of the deleted table's entities", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			_, err := b.InsertEntity(ctx, table, api.NewEntity("p", "r", map[string]api.Value{"Old": api.Bool(true)}))
			Expect(err).To(SucceedOnBackend())
			Expect(b.DeleteTable(ctx, table)).To(SucceedOnBackend())
			// Against a real endpoint this waits the documented 40 s and more (NameReuseBound).
			if _, err := f.WaitForDeletedName(ctx, b, table); err != nil {
				Expect(err).To(HaveFailedAs(spec.ErrTableBeingDeleted))
				Skip("the deleted name did not become free within " + f.NameReuseBound().String())
			}
			page, err := b.QueryEntities(ctx, table, api.Query{})
			Expect(err).To(SucceedOnBackend())
			Expect(page.Entities).To(BeEmpty(), "the re-created table %s still holds %s", table, KeyList(page.Entities))
			_, err = b.GetEntity(ctx, table, "p", "r", nil)
			Expect(err).To(HaveFailedWithStatus(404), "Get Entity of the deleted table's entity in the re-created table")
		})
	})
})

var _ = framework.Describe("Entity operations on a missing table", func(f *framework.F) {
	type op func(ctx context.Context, b api.Backend, table string) error
	e := api.NewEntity("p", "r", map[string]api.Value{"V": api.Int32(1)})
	f.DescribeTable("tables.missing.entity-operations", "fail with 404",
		func(ctx context.Context, do op) {
			table := f.TableName()
			err := do(ctx, f.Backend(), table)
			Expect(err).To(HaveFailedWithStatus(404), "an entity operation on the missing table %s", table)
			Expect(err).To(HaveFailedAs(spec.ErrTableNotFound, spec.ErrResourceNotFound))
			f.Choice("code for a missing table", OutcomeOf(err))
		},
		Entry("Insert Entity", op(func(ctx context.Context, b api.Backend, t string) error {
			_, err := b.InsertEntity(ctx, t, e)
			return err
		})),
		Entry("Get Entity", op(func(ctx context.Context, b api.Backend, t string) error {
			_, err := b.GetEntity(ctx, t, "p", "r", nil)
			return err
		})),
		Entry("Update Entity", op(func(ctx context.Context, b api.Backend, t string) error {
			_, err := b.UpdateEntity(ctx, t, e, api.Replace, api.IfMatchAny)
			return err
		})),
		Entry("Merge Entity", op(func(ctx context.Context, b api.Backend, t string) error {
			_, err := b.UpdateEntity(ctx, t, e, api.Merge, api.IfMatchAny)
			return err
		})),
		Entry("Insert Or Replace Entity", op(func(ctx context.Context, b api.Backend, t string) error {
			_, err := b.UpdateEntity(ctx, t, e, api.Replace, "")
			return err
		})),
		Entry("Insert Or Merge Entity", op(func(ctx context.Context, b api.Backend, t string) error {
			_, err := b.UpdateEntity(ctx, t, e, api.Merge, "")
			return err
		})),
		Entry("Delete Entity", op(func(ctx context.Context, b api.Backend, t string) error {
			return b.DeleteEntity(ctx, t, "p", "r", api.IfMatchAny)
		})),
		Entry("Query Entities", op(func(ctx context.Context, b api.Backend, t string) error {
			_, err := b.QueryEntities(ctx, t, api.Query{})
			return err
		})),
		Entry("Query Entities with a filter", op(func(ctx context.Context, b api.Backend, t string) error {
			_, err := b.QueryEntities(ctx, t, api.Query{Filter: "PartitionKey eq 'p'"})
			return err
		})),
	)
})
