package mutant

import (
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver"
)

func identity(b api.Backend) api.Backend { return b }

// sasMutant is a mutant whose only fault is in the SAS it signs: what the client asked to
// restrict is not restricted. It needs a base that can issue a SAS.
func sasMutant(m Mutant, rewrite func(driver.SASOptions) driver.SASOptions) Mutant {
	m.Base, m.LabelFilter = "reference-http", "area:auth"
	return define(m, identity, hooks{sas: rewrite})
}

// Shared access signatures (SPEC.md 7.2).
var (
	_ = sasMutant(Mutant{
		Name:        "sas-ignores-key-range",
		Description: "signs a SAS without the PartitionKey/RowKey range the client asked for, so it reaches the whole table",
		Breaks:      []string{"auth.sas.range.partition", "auth.sas.range.row", "auth.sas.range.query"},
	}, func(o driver.SASOptions) driver.SASOptions {
		o.StartPK, o.StartRK, o.EndPK, o.EndRK = "", "", "", ""
		return o
	})

	_ = sasMutant(Mutant{
		Name:        "sas-ignores-permissions",
		Description: "signs every SAS with all permissions (raud), whatever the client asked for",
		Breaks: []string{"auth.sas.permission.read", "auth.sas.permission.add", "auth.sas.permission.update",
			"auth.sas.permission.delete", "auth.sas.permission.upsert"},
	}, func(o driver.SASOptions) driver.SASOptions {
		o.Permissions = "raud"
		return o
	})

	_ = sasMutant(Mutant{
		Name:        "sas-ignores-validity",
		Description: "signs every SAS valid from now for an hour, whatever start and expiry the client asked for",
		Breaks:      []string{"auth.sas.expired", "auth.sas.not-yet-valid"},
	}, func(o driver.SASOptions) driver.SASOptions {
		o.Start, o.Expiry = time.Time{}, time.Now().Add(time.Hour)
		return o
	})
)
