package spec

// Documentation sources, cited by limits, error codes and rules. The keys follow SPEC.md's
// source key.
const (
	SrcDataModel      = "https://learn.microsoft.com/en-us/rest/api/storageservices/understanding-the-table-service-data-model"
	SrcQueryingTables = "https://learn.microsoft.com/en-us/rest/api/storageservices/querying-tables-and-entities"
	SrcQueryEntities  = "https://learn.microsoft.com/en-us/rest/api/storageservices/query-entities"
	SrcQueryTables    = "https://learn.microsoft.com/en-us/rest/api/storageservices/query-tables"
	SrcPagination     = "https://learn.microsoft.com/en-us/rest/api/storageservices/query-timeout-and-pagination"
	SrcTimeouts       = "https://learn.microsoft.com/en-us/rest/api/storageservices/setting-timeouts-for-table-service-operations"
	SrcBatch          = "https://learn.microsoft.com/en-us/rest/api/storageservices/performing-entity-group-transactions"
	SrcTableErrors    = "https://learn.microsoft.com/en-us/rest/api/storageservices/table-service-error-codes"
	SrcCommonErrors   = "https://learn.microsoft.com/en-us/rest/api/storageservices/common-rest-api-error-codes"
	SrcInsertEntity   = "https://learn.microsoft.com/en-us/rest/api/storageservices/insert-entity"
	SrcUpdateEntity   = "https://learn.microsoft.com/en-us/rest/api/storageservices/update-entity2"
	SrcMergeEntity    = "https://learn.microsoft.com/en-us/rest/api/storageservices/merge-entity"
	SrcDeleteEntity   = "https://learn.microsoft.com/en-us/rest/api/storageservices/delete-entity1"
	SrcInsertOrRepl   = "https://learn.microsoft.com/en-us/rest/api/storageservices/insert-or-replace-entity"
	SrcInsertOrMerge  = "https://learn.microsoft.com/en-us/rest/api/storageservices/insert-or-merge-entity"
	SrcCreateTable    = "https://learn.microsoft.com/en-us/rest/api/storageservices/create-table"
	SrcDeleteTable    = "https://learn.microsoft.com/en-us/rest/api/storageservices/delete-table"
	SrcPayloadFormat  = "https://learn.microsoft.com/en-us/rest/api/storageservices/payload-format-for-table-service-operations"
	SrcDateTimeFormat = "https://learn.microsoft.com/en-us/rest/api/storageservices/formatting-datetime-values"
	SrcSharedKey      = "https://learn.microsoft.com/en-us/rest/api/storageservices/authorize-with-shared-key"
	SrcServiceSAS     = "https://learn.microsoft.com/en-us/rest/api/storageservices/create-service-sas"
	SrcScaleTargets   = "https://learn.microsoft.com/en-us/azure/storage/tables/scalability-targets"
	SrcPerfChecklist  = "https://learn.microsoft.com/en-us/azure/storage/tables/storage-performance-checklist"
	SrcCosmosFAQ      = "https://learn.microsoft.com/en-us/azure/cosmos-db/table/faq"
	SrcCosmosLimits   = "https://learn.microsoft.com/en-us/azure/cosmos-db/concepts-limits"
	SrcSizeBlog       = "https://learn.microsoft.com/en-us/archive/blogs/avkashchauhan/how-the-size-of-an-entity-is-caclulated-in-windows-azure-table-storage"
	// SrcDesignGuide is the design guide; rules append a section anchor such as
	// "#log-tail-pattern".
	SrcDesignGuide = "https://learn.microsoft.com/en-us/azure/storage/tables/table-storage-design-guide"
	// SrcDesignPatterns is the newest "Table design patterns" page.
	SrcDesignPatterns = "https://learn.microsoft.com/en-us/azure/storage/tables/table-storage-design-patterns"
	// SrcDesignForQuery is the "Design for querying" page.
	SrcDesignForQuery = "https://learn.microsoft.com/en-us/azure/storage/tables/table-storage-design-for-query"
	// SrcLiveStringEdge is a live answer of Storage to a string of exactly 32 Ki units.
	SrcLiveStringEdge = "https://github.com/Azure/azure-sdk-for-python/issues/38730"
	// SrcTraffic marks facts seen in recorded real traffic (Azure SDK for Python recordings).
	SrcTraffic = "https://github.com/Azure/azure-sdk-for-python/tree/main/sdk/tables/azure-data-tables/tests/recordings"
)
