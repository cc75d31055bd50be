package spec

// Documentation sources, cited by limits, error codes and rules. The keys follow EVIDENCE.md's
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
	// SrcTopZero is a live answer of Storage to $top=0: an empty page.
	SrcTopZero = "https://github.com/Azure/Azurite/issues/1428"
	// SrcDateTimeNoZone is a live exchange with Storage that stored a DateTime without a
	// zone designator as UTC.
	SrcDateTimeNoZone = "https://github.com/Azure/Azurite/issues/746"
	// SrcVersionInvalid quotes Storage refusing a malformed x-ms-version.
	SrcVersionInvalid = "https://github.com/Azure/azure-sdk-for-net/issues/45302"
	// SrcPythonEncoderTest is the Python SDK's live encoder test (typed values sent as JSON
	// strings, nested annotations of the old encoder).
	SrcPythonEncoderTest = "https://github.com/Azure/azure-sdk-for-python/blob/025adb7314643c8fbc589c1cef8785aca1a27cdd/sdk/tables/azure-data-tables/tests/test_encoder.py"
	// SrcGoAnnotatedEntityTest is the Go SDK's live test that sent a DateTime with nine
	// fractional digits.
	SrcGoAnnotatedEntityTest = "https://github.com/Azure/azure-sdk-for-go/tree/main/sdk/data/aztables"
	// SrcLegacyNodePayload is the legacy Node SDK's recording of its payload tests against
	// Storage (2017): Doubles in exponent form answered without annotation.
	SrcLegacyNodePayload = "https://github.com/Azure/azure-storage-node/blob/0833cdd1a59aba0efe19c6a926454066f7092454/test/recordings/tableservice-payload-tests.nock.js"
	// SrcDoubleOutOfRange quotes Storage refusing an Edm.Double beyond its range.
	SrcDoubleOutOfRange = "https://github.com/Azure/Azurite/issues/2387"
	// SrcDateTimeEmpty is Azurite's issue, fixed by Microsoft, on an empty Edm.DateTime.
	SrcDateTimeEmpty = "https://github.com/Azure/Azurite/issues/1757"
	// SrcEntityTooLargeLive quotes Storage's answer to an entity over 1 MiB made of strings
	// of 32 Ki characters, in Azurite's SDK tests.
	SrcEntityTooLargeLive = "https://github.com/Azure/Azurite/blob/40b4d4b491a2cf954a86be74360e3b883abd5831/tests/table/apis/table.entity.azure.data-tables.test.ts"
	// SrcHealthCheckFilter is a widely used health check that probes live Table endpoints
	// with the filter `false`.
	SrcHealthCheckFilter = "https://github.com/Xabaril/AspNetCore.Diagnostics.HealthChecks/blob/master/src/HealthChecks.Azure.Data.Tables/AzureTableServiceHealthCheck.cs"
	// SrcGoInvalidEntity is the Go SDK's recording of an insert without keys on Storage.
	SrcGoInvalidEntity = "https://github.com/Azure/azure-sdk-for-go/blob/64f3ac0f62f96c3a2a7583d8cd108bc19977a602/sdk/data/aztables/testdata/recordings/TestInvalidEntity/TestInvalidEntity_storage.json"
	// SrcTraffic marks facts seen in recorded real traffic (Azure SDK for Python recordings).
	SrcTraffic = "https://github.com/Azure/azure-sdk-for-python/tree/main/sdk/tables/azure-data-tables/tests/recordings"
)
