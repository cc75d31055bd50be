package spec

// Rules of authorization: service SAS for tables and Shared Key (EVIDENCE.md 5.3, 7; the design
// guide's "Control access with shared access signatures").
//
// Decisions on UNCERTAIN facts:
//   - A permission the SAS lacks: 403 with AuthorizationFailure or
//     AuthorizationPermissionMismatch (CERR lists both); the code is recorded.
//   - A SAS whose PartitionKey and RowKey bounds are both set: whether the range is one
//     range of (PartitionKey, RowKey) pairs or a PartitionKey range crossed with a RowKey
//     range is not documented. Keys that are inside (or outside) under both readings are
//     MUSTs; the keys where the readings differ are a MAY that records the reading.
//   - A query through a SAS with a key range: refused or restricted to the range; either is
//     accepted, an entity outside the range in the answer is not.
//   - A SAS for another table and a table operation through a service SAS: 403, the code
//     is recorded.
//   - A request without credentials: 401 or 403 (EVIDENCE.md 11.13), recorded.

const (
	sasSrcPermissions = SrcServiceSAS + "#permissions-for-a-table"
	sasSrcRanges      = SrcServiceSAS + "#specify-table-access-ranges"
	sasSrcTimes       = SrcServiceSAS + "#specify-the-signature-validity-interval"
)

func init() {
	sas := func(r Rule) Rule {
		r.Area, r.Feature = AreaAuth, FSAS
		if r.Sections == nil {
			r.Sections = []string{dmSecSAS}
		}
		return r
	}
	AddRules(
		sas(Rule{ID: "auth.sas.permission.read", Level: Must, Evidence: []Fact{doc("7.2")},
			Text:   "A SAS with permission r MUST allow Get Entity and Query Entities and MUST refuse every write with 403 (AuthorizationFailure or AuthorizationPermissionMismatch), leaving the table unchanged.",
			Source: sasSrcPermissions}),
		sas(Rule{ID: "auth.sas.permission.add", Level: Must, Evidence: []Fact{doc("7.2")},
			Text:   "A SAS with permission a MUST allow Insert Entity and MUST refuse reads, updates, merges, deletes and upserts with 403, leaving the table unchanged.",
			Source: sasSrcPermissions}),
		sas(Rule{ID: "auth.sas.permission.update", Level: Must, Evidence: []Fact{doc("7.2")},
			Text:   "A SAS with permission u MUST allow Update Entity and Merge Entity and MUST refuse reads, inserts, deletes and upserts with 403, leaving the table unchanged.",
			Source: sasSrcPermissions}),
		sas(Rule{ID: "auth.sas.permission.delete", Level: Must, Evidence: []Fact{doc("7.2")},
			Text:   "A SAS with permission d MUST allow Delete Entity and MUST refuse reads and every other write with 403, leaving the table unchanged.",
			Source: sasSrcPermissions}),
		sas(Rule{ID: "auth.sas.permission.upsert", Level: Must, Evidence: []Fact{doc("7.2")},
			Text:   "Insert Or Replace Entity and Insert Or Merge Entity MUST be allowed by a SAS with permissions a and u together, and refused with 403 by a SAS with only one of them.",
			Source: sasSrcPermissions}),
		sas(Rule{ID: "auth.sas.permission.all", Level: Must, Evidence: []Fact{doc("7.2")},
			Text:   "A SAS with permissions raud MUST allow every entity operation on its table.",
			Source: sasSrcPermissions}),
		sas(Rule{ID: "auth.sas.range.partition", Level: Must, Evidence: []Fact{doc("7.2"), traffic("E-auth-errors-recorded")},
			Text:   "A SAS bounded by spk and epk MUST allow operations on entities whose PartitionKey lies in the inclusive range and refuse the others with 403 AuthorizationFailure.",
			Source: sasSrcRanges}),
		sas(Rule{ID: "auth.sas.range.row", Level: Must, Evidence: []Fact{doc("7.2"), traffic("E-auth-errors-recorded")},
			Text:   "A SAS bounded by spk/srk and epk/erk MUST allow operations on entities at and between the two (PartitionKey, RowKey) bounds and refuse those before the lower or after the upper bound with 403 AuthorizationFailure.",
			Source: sasSrcRanges}),
		sas(Rule{ID: "auth.sas.range.row-reading", Level: May,
			Text:   "Inside the PartitionKey range, a RowKey outside srk..erk MAY be allowed (one range of key pairs) or refused with 403 (a PartitionKey range crossed with a RowKey range); the reading is recorded.",
			Source: sasSrcRanges}),
		sas(Rule{ID: "auth.sas.range.query", Level: Must, Evidence: []Fact{doc("7.2")},
			Text:   "A query through a SAS with a key range MUST NOT return an entity outside the range: it is refused with 403 or answers only entities inside the range (the choice is recorded).",
			Source: sasSrcRanges}),
		sas(Rule{ID: "auth.sas.expired", Level: Must, Evidence: []Fact{doc("7.2")},
			Text:   "A SAS whose expiry time has passed MUST be refused with 403 AuthenticationFailed.",
			Source: sasSrcTimes}),
		sas(Rule{ID: "auth.sas.not-yet-valid", Level: Must, Evidence: []Fact{doc("7.2")},
			Text:   "A SAS whose start time is still in the future MUST be refused with 403 AuthenticationFailed.",
			Source: sasSrcTimes}),
		sas(Rule{ID: "auth.sas.other-table", Level: Must, Evidence: []Fact{doc("7.2")},
			Text:   "A SAS issued for one table MUST be refused with 403 on every other table, leaving it unchanged (the code is recorded).",
			Source: SrcServiceSAS}),
		sas(Rule{ID: "auth.sas.no-table-management", Level: Must, Evidence: []Fact{doc("7.2")},
			Text:   "A service SAS for a table MUST NOT allow Create Table or Delete Table: both are refused with 403 (the code is recorded).",
			Source: SrcServiceSAS}),
		Rule{ID: "auth.shared-key.valid", Level: Must, Area: AreaAuth, Evidence: []Fact{doc("7.1")},
			Text:   "A request signed with the account key by the Shared Key rules MUST be accepted.",
			Source: SrcSharedKey},
		Rule{ID: "auth.shared-key.bad-signature", Level: Must, Area: AreaAuth, Evidence: []Fact{doc("7.1"), traffic("E-auth-errors-recorded")},
			Text:   "A request whose Shared Key signature does not match MUST be refused with 403 AuthenticationFailed, without any effect.",
			Source: SrcSharedKey},
		Rule{ID: "auth.anonymous", Level: Must, Area: AreaAuth, Evidence: []Fact{doc("7.2")},
			Text:   "A request without any credential MUST be refused with 401 or 403 (the status and code are recorded), without any effect and without revealing data.",
			Source: SrcCommonErrors},
	)
}
