package spec

import (
	"fmt"
	"strings"
)

// CosmosKind says how Azure Cosmos DB for Table answers what a rule is about, compared with
// Azure Table Storage.
type CosmosKind string

// The kinds of Cosmos expectation. A rule without an entry in the cosmos table is CosmosSame.
const (
	// CosmosSame: Cosmos answers as Storage does; the rule is judged as written.
	CosmosSame CosmosKind = "same"
	// CosmosDiffers: Cosmos is recorded (or documented) to give another answer, described by
	// Cosmos.Status, Cosmos.Code and Cosmos.Answer. Under the cosmos profile that answer
	// passes and Storage's fails.
	CosmosDiffers CosmosKind = "differs"
	// CosmosUnsupported: Cosmos refuses the feature (Cosmos.Statuses, e.g. 501 NotImplemented
	// or 405 MethodNotAllowed). Under the cosmos profile the rule is not applicable; a backend
	// that serves the feature anyway fails it.
	CosmosUnsupported CosmosKind = "unsupported"
	// CosmosUnpromised: Cosmos's evidence leaves the answer open (a limit documented
	// differently and never recorded, documentation in conflict with recordings). Under the
	// cosmos profile the rule is not applicable; only a server error fails it.
	CosmosUnpromised CosmosKind = "unpromised"
	// CosmosOrderUnpromised: Cosmos promises no order of query results (E-cosmos-order), and
	// nothing else of the rule differs. Under the cosmos profile a failure of the spec's
	// order check (CheckOrder) is Cosmos's answer; which entities come back, their values
	// and their pages are judged as written.
	CosmosOrderUnpromised CosmosKind = "order-unpromised"
)

// The strengths of a Cosmos expectation's evidence, strongest first (EVIDENCE.md 0).
const (
	CosmosByTraffic = "recorded traffic"
	CosmosByDocs    = "documentation"
	// CosmosReported: said in a report of a live answer that was not found again in any
	// stored recording. Such an expectation never fails a backend that answers as Storage
	// does (a difference keeps StorageToo), since the evidence allows either answer.
	CosmosReported = "reported, not found in a recording"
)

// Cosmos is what Cosmos DB for Table does about one rule, with its evidence.
type Cosmos struct {
	Kind CosmosKind `json:"kind"`
	// Statuses are the HTTP statuses Cosmos answers where it refuses what Storage accepts
	// (CosmosDiffers with a refusal) or does not support the feature (CosmosUnsupported);
	// empty for a CosmosDiffers answer that is not a refusal (Accepts).
	Statuses []int `json:"statuses,omitempty"`
	// Code is the error code of that refusal ("" when it is not recorded).
	Code string `json:"code,omitempty"`
	// Accepts is true when Cosmos accepts, or answers differently without an error status,
	// what the rule has Storage refuse or answer otherwise.
	Accepts bool `json:"accepts,omitempty"`
	// Check names the spec check (one of the Check constants) whose failure is Cosmos's
	// answer, for a difference without an error status (Accepts) and for an order not
	// promised (CheckOrder): a failure of any other assertion of the spec is a failure.
	Check string `json:"check,omitempty"`
	// Answer says Cosmos's answer in words.
	Answer string `json:"answer"`
	// Evidence is the EVIDENCE.md anchor (for example E-cosmos-empty-keys) of the facts behind it.
	Evidence string `json:"evidence"`
	// Strength is CosmosByTraffic, CosmosByDocs or CosmosReported.
	Strength string `json:"strength"`
	// Specs, when set, names the specs of the rule the difference concerns, by a part of
	// their text; the rule's other specs are judged as written (CosmosSame).
	Specs []string `json:"specs,omitempty"`
	// StorageToo is true when Cosmos was also recorded answering as Storage does (the answer
	// changed over time), or its difference is only reported (CosmosReported): under the
	// cosmos profile both answers pass.
	StorageToo bool `json:"storageToo,omitempty"`
}

// For returns the expectation that applies to the rule's spec with the given text: c, or
// CosmosSame when c concerns other specs of the rule only.
func (c Cosmos) For(specText string) Cosmos {
	if len(c.Specs) == 0 {
		return c
	}
	for _, s := range c.Specs {
		if strings.Contains(specText, s) {
			return c
		}
	}
	return Cosmos{Kind: CosmosSame}
}

// KindOrSame returns c.Kind, or CosmosSame when it is empty.
func (c Cosmos) KindOrSame() CosmosKind {
	if c.Kind == "" {
		return CosmosSame
	}
	return c.Kind
}

// Summary is c in one line for listings: "same", "differs: 400 PropertiesNeedValue", ...
func (c Cosmos) Summary() string {
	k := c.KindOrSame()
	if k == CosmosSame {
		return string(k)
	}
	var what []string
	for _, s := range c.Statuses {
		what = append(what, fmt.Sprint(s))
	}
	if c.Code != "" {
		what = append(what, c.Code)
	}
	if c.Accepts {
		what = append(what, "accepted")
	}
	if c.Check != "" && c.Kind != CosmosOrderUnpromised {
		what = append(what, "("+c.Check+")")
	}
	if c.StorageToo {
		what = append(what, "or as Storage")
	}
	if len(what) == 0 {
		return string(k)
	}
	return string(k) + ": " + strings.Join(what, " ")
}

const (
	cosmosUnsortedAnswer = "Results come back in insertion order, not sorted by PartitionKey and RowKey; Cosmos promises no order."
	cosmosACLAnswer      = "Get and Set Table ACL answer 501 NotImplemented (as JSON even to Accept: application/xml); stored access policies do not exist."
	cosmosServiceAnswer  = "Service properties (CORS, logging, metrics) and service stats answer 501 NotImplemented."
	cosmosRangeAnswer    = "A service SAS with a key range (spk, srk, epk, erk) is refused whatever the key: 501 NotImplemented (2021), 405 MethodNotAllowed (2022)."
	cosmosPropsAnswer    = "255 custom properties, and a property name of 256 characters, are accepted; no property count or name length limit was met."
	cosmosSizeAnswer     = "Cosmos documents a 2 MB item and transaction limit instead of Storage's 1 MiB entity and 4 MiB transaction; its answer at Storage's limits is not recorded."
	cosmosKeyAnswer      = "Cosmos documents other key limits (RowKey 255 bytes in its FAQ, 1,023 bytes on its limits page); its answer is not recorded."
)

// The ACL's 501 is reported, not found again in a recording; the 501 of service properties
// and stats, and the SAS range refusal, are recorded (E-cosmos-unsupported, E-cosmos-sas-range).
var (
	cosmosUnsorted   = Cosmos{Kind: CosmosOrderUnpromised, Check: CheckOrder, Answer: cosmosUnsortedAnswer, Evidence: "E-cosmos-order", Strength: CosmosByTraffic}
	cosmosNoACL      = Cosmos{Kind: CosmosUnsupported, Statuses: []int{501}, Code: "NotImplemented", Answer: cosmosACLAnswer, Evidence: "E-cosmos-unsupported", Strength: CosmosReported}
	cosmosNoService  = Cosmos{Kind: CosmosUnsupported, Statuses: []int{501}, Code: "NotImplemented", Answer: cosmosServiceAnswer, Evidence: "E-cosmos-unsupported", Strength: CosmosByTraffic}
	cosmosNoRange    = Cosmos{Kind: CosmosUnsupported, Statuses: []int{501, 405}, Answer: cosmosRangeAnswer, Evidence: "E-cosmos-sas-range", Strength: CosmosByTraffic}
	cosmosManyProps  = Cosmos{Kind: CosmosDiffers, Accepts: true, Check: CheckRefusal, Answer: cosmosPropsAnswer, Evidence: "E-cosmos-property-limits", Strength: CosmosByTraffic}
	cosmosItemLimits = Cosmos{Kind: CosmosUnpromised, Answer: cosmosSizeAnswer, Evidence: "E-cosmos-documented", Strength: CosmosByDocs}
	cosmosEmptyKeys  = Cosmos{Kind: CosmosDiffers, Statuses: []int{400}, Code: "PropertiesNeedValue", Answer: "An empty PartitionKey or RowKey is refused with 400 PropertiesNeedValue.", Evidence: "E-cosmos-empty-keys", Strength: CosmosByTraffic}
	cosmosKeySizes   = Cosmos{Kind: CosmosUnpromised, Answer: cosmosKeyAnswer, Evidence: "E-cosmos-documented", Strength: CosmosByDocs}
)

// cosmos is what Cosmos DB for Table does where it does not answer as Storage (EVIDENCE.md
// 8 and the Cosmos facts of its section "Cosmos DB for Table in recorded traffic"), with
// Cosmos's answer in words (Cosmos.Answer); a rule without an entry is CosmosSame.
var cosmos = map[string]Cosmos{
	// Item 1: empty keys.
	"entities.key.empty-partition-key": cosmosEmptyKeys,
	"ordering.empty-partition-key":     cosmosEmptyKeys,
	"ordering.empty-row-key":           cosmosEmptyKeys,
	// Item 6: names that differ only in case are distinct properties (Birthday, birthday) but
	// for etag: entities.property.name-case is the same as Storage.
	"entities.property.name-cosmos-reserved": {Kind: CosmosUnpromised,
		Answer: "The Cosmos FAQ says the names id, ID, rid, etag and ResourceId are not supported, but recorded traffic shows etag stored as an ordinary property (and Etag, sent beside it, dropped); the evidence is in conflict.", Evidence: "E-cosmos-name-case", Strength: CosmosReported},
	// Item 5: property count and name length.
	"limits.properties.count":        cosmosOver(cosmosManyProps, "one over"),
	"limits.properties.count-merged": cosmosOver(cosmosManyProps, "one over", "adding one to 252"),
	"limits.property-name.length":    cosmosOver(cosmosManyProps, "one over"),
	"pattern.wide-entities.too-many": {Kind: CosmosUnpromised,
		Answer: "365 properties in one entity: Cosmos's answer is not recorded (255 were accepted).", Evidence: "E-cosmos-property-limits", Strength: CosmosByTraffic},
	"pattern.wide-entities.batch": {Kind: CosmosDiffers, Accepts: true, Check: CheckRefusal, Specs: []string{"more than 252 properties"},
		Answer: "A part of 253 properties is accepted (255 were recorded accepted), so the transaction stores both parts.", Evidence: "E-cosmos-property-limits", Strength: CosmosByTraffic},
	// Documented limits without a recorded answer.
	"limits.key.size":                         cosmosKeySizes,
	"limits.key.size-between":                 cosmosKeySizes,
	"limits.entity.size":                      cosmosItemLimits,
	"limits.entity.size-edge":                 cosmosItemLimits,
	"limits.entity.size-merged":               cosmosItemLimits,
	"limits.entity.size-first":                cosmosItemLimits,
	"pattern.large-entities.entity-too-large": cosmosItemLimits,
	"batch.limit.payload":                     cosmosItemLimits,
	"query.top.over-max": {Kind: CosmosUnpromised,
		Answer: "Cosmos documents that $top is not limited to 1,000; its answer above 1,000 is not recorded.", Evidence: "E-cosmos-documented", Strength: CosmosByDocs},
	"modify.read-your-writes": {Kind: CosmosUnpromised,
		Answer: "Accounts default to bounded staleness: reads in another region may lag behind acknowledged writes (within one region writes are read back).", Evidence: "E-cosmos-documented", Strength: CosmosByDocs},
	// Table names.
	"tables.name.case-insensitive": {Kind: CosmosDiffers, Accepts: true, Check: CheckRefusal,
		Answer: "Table names are case-sensitive: a name that differs from an existing one only in case creates another table.", Evidence: "E-cosmos-documented", Strength: CosmosByDocs},
	"tables.name.case-insensitive-access": {Kind: CosmosDiffers, Statuses: []int{404},
		Answer: "Table names are case-sensitive: the table is not found through its name in another letter case.", Evidence: "E-cosmos-documented", Strength: CosmosByDocs},
	// Item 7 and 8: batches.
	"batch.table.missing": {Kind: CosmosDiffers, Statuses: []int{404}, Code: "ResourceNotFound",
		Answer: "A transaction against a missing table fails with 404 ResourceNotFound (Storage: TableNotFound).", Evidence: "E-cosmos-batch", Strength: CosmosByTraffic},
	// Item 10: $format.
	"protocol.format.overrides-accept": {Kind: CosmosDiffers, Accepts: true, StorageToo: true, Check: CheckMetadataLevel,
		Answer: "$format is reported not to override the Accept header (the answer has the metadata level Accept asks for); no recording shows it, so Storage's answer is accepted too.", Evidence: "E-cosmos-format", Strength: CosmosReported},
	// Item 17: the header set.
	"protocol.error.code-header": {Kind: CosmosDiffers, Accepts: true, Check: CheckErrorCodeHeader,
		Answer: "Errors carry their code only in the odata.error body: no x-ms-error-code header.", Evidence: "E-cosmos-headers", Strength: CosmosByTraffic},
	"protocol.version.echo": {Kind: CosmosDiffers, Accepts: true, Check: CheckVersionHeader,
		Answer: "No answer carries x-ms-version.", Evidence: "E-cosmos-headers", Strength: CosmosByTraffic},
	// Item 19: request ids.
	"protocol.client-request-id": {Kind: CosmosDiffers, Accepts: true, Check: CheckClientRequestIDHeader,
		Answer: "x-ms-client-request-id is never echoed.", Evidence: "E-cosmos-headers", Strength: CosmosByTraffic},
	"protocol.request-id": {Kind: CosmosDiffers, Accepts: true, StorageToo: true, Check: CheckRequestIDHeader,
		Answer: "Answers recorded since late 2022 carry no x-ms-request-id (the id appears only in error messages as RequestID:); those of 2021 and early 2022 did.", Evidence: "E-cosmos-headers", Strength: CosmosByTraffic},
	// Items 2-4: features Cosmos does not serve.
	"auth.sas.range.partition":           cosmosNoRange,
	"auth.sas.range.row":                 cosmosNoRange,
	"auth.sas.range.row-reading":         cosmosNoRange,
	"auth.sas.range.query":               cosmosNoRange,
	"auth.sas.stored-policy":             cosmosNoACL,
	"auth.sas.stored-policy-revoked":     cosmosNoACL,
	"auth.sas.stored-policy-unknown":     cosmosNoACL,
	"service.acl.accept-xml":             cosmosNoACL,
	"service.acl.empty":                  cosmosNoACL,
	"service.acl.roundtrip":              cosmosNoACL,
	"service.acl.partial":                cosmosNoACL,
	"service.acl.missing-table":          cosmosNoACL,
	"service.acl.too-many":               cosmosNoACL,
	"service.acl.error-xml":              cosmosNoACL,
	"service.properties.roundtrip":       cosmosNoService,
	"service.properties.keeps-omitted":   cosmosNoService,
	"service.properties.cors-limit":      cosmosNoService,
	"service.properties.retention-limit": cosmosNoService,
	"service.stats.secondary":            cosmosNoService,
	"service.secondary.read-only": {Kind: CosmosUnsupported, Statuses: []int{501}, Code: "NotImplemented", Specs: []string{"Set Table ACL"},
		Answer: "Set Table ACL is answered 501 NotImplemented at any location, the secondary's included: Cosmos DB for Table keeps no table ACLs.", Evidence: "E-cosmos-unsupported", Strength: CosmosByTraffic},
	"service.cors.preflight-allowed":        cosmosNoService,
	"service.cors.preflight-refused":        cosmosNoService,
	"service.cors.actual-headers":           cosmosNoService,
	"service.cors.preflight-missing-header": cosmosNoService,
	"service.cors.vary":                     cosmosNoService,
	// Item 11: order. Only the order differs: which entities come back, and their pages,
	// are judged as written.
	"ordering.key-order":              cosmosUnsorted,
	"ordering.ascii":                  cosmosUnsorted,
	"ordering.zero-padding":           cosmosUnsorted,
	"ordering.non-ascii":              cosmosUnsorted,
	"ordering.surrogates":             cosmosUnsorted,
	"ordering.across-pages":           cosmosUnsorted,
	"ordering.across-partitions":      cosmosUnsorted,
	"ordering.filtered":               cosmosUnsorted,
	"ordering.inverted-ticks":         cosmosUnsorted,
	"pattern.intra-index.range":       cosmosUnsorted,
	"pattern.inter-index.range":       cosmosUnsorted,
	"pattern.compound-key.range":      cosmosUnsorted,
	"pattern.log-tail.newest-first":   cosmosUnsorted,
	"pattern.log-tail.next-page":      cosmosUnsorted,
	"pattern.log-tail.string-order":   cosmosUnsorted,
	"rel.heterogeneous.rowkey-prefix": cosmosUnsorted,
	// A saved continuation is a position in Cosmos's order, the order of writes: an entity
	// inserted before the position in key order comes after it.
	"pagination.resume-after-insert": {Kind: CosmosUnpromised, Specs: []string{"before the position", "before the first entity", "in an earlier partition"},
		Answer: "Entities come back in insertion order, so a saved position is one in that order, not in key order; how Cosmos resumes after an insert behind the position in key order is not recorded.", Evidence: "E-cosmos-resume", Strength: CosmosByTraffic},
}

// The names of spec checks (suites/framework F.Check) that a Cosmos difference without an
// error status concerns: the one assertion of a spec whose failure is Cosmos's answer.
const (
	// CheckOrder: the order of query results (every other assertion of an ordering spec,
	// which entities come back among them, is made outside it).
	CheckOrder = "order"
	// CheckRefusal: the refusal of what the spec's rule has Storage refuse (a limit, a
	// name that differs only in case).
	CheckRefusal = "refusal"
	// CheckVersionHeader: the answer's x-ms-version header.
	CheckVersionHeader = "x-ms-version header"
	// CheckErrorCodeHeader: an error answer's x-ms-error-code header.
	CheckErrorCodeHeader = "x-ms-error-code header"
	// CheckClientRequestIDHeader: the echo of x-ms-client-request-id.
	CheckClientRequestIDHeader = "x-ms-client-request-id header"
	// CheckRequestIDHeader: the answer's x-ms-request-id header.
	CheckRequestIDHeader = "x-ms-request-id header"
	// CheckMetadataLevel: the JSON metadata level of the answer.
	CheckMetadataLevel = "metadata level"
)

// cosmosOver returns c for the rule's specs whose text holds one of specs (those over
// Storage's limit); the others are judged as written.
func cosmosOver(c Cosmos, specs ...string) Cosmos {
	c.Specs = specs
	return c
}

// withCosmos returns r with its Cosmos expectation from the table above.
func withCosmos(r Rule) Rule {
	if c, ok := cosmos[r.ID]; ok {
		r.Cosmos = c
	} else {
		r.Cosmos = Cosmos{Kind: CosmosSame}
	}
	return r
}
