package spec

// Cosmos DB for Table's own answers and limits (EVIDENCE.md, Cosmos DB for Table in recorded
// traffic), for the Cosmos flavour of the reference server.
var (
	// ErrTooManyRequests is Cosmos's answer over its provisioned request units, as recorded
	// in November 2022 without a retry-after header (E-cosmos-throttling); its message goes
	// on with the lines of CosmosThrottledLines.
	ErrTooManyRequests = register(ErrorCode{"TooManyRequests", 429, "Message: {\"Errors\":[\"Request rate is large. More Request Units may be needed, so no changes were made. Please retry this request later. Learn more: http://aka.ms/cosmosdb-error-429\"]}", SrcTraffic})
)

// The Cosmos flavour's protocol facts.
const (
	// CosmosEmptyKeyMessage is the message of the refusal of an empty key (E-cosmos-empty-keys).
	CosmosEmptyKeyMessage = "PartitionKey/RowKey cannot be empty"
	// CosmosErrorLang is the lang of Cosmos's error messages (E-cosmos-shapes).
	CosmosErrorLang = "en-us"
	// CosmosRequestUnitsPerOperation is what the flavour charges each request against its
	// request-unit budget: one unit, Cosmos's cost of a 1 KB point read (a simplification:
	// writes and queries cost more on Cosmos).
	CosmosRequestUnitsPerOperation = 1
	// CosmosMaxCustomProperties is the most custom properties the Cosmos flavour holds: 255
	// were recorded accepted and Cosmos documents no practical limit (E-cosmos-property-limits),
	// but the reference's store holds no more; past it the flavour answers
	// CosmosPropertyCapacityMessage, its own limit and not Cosmos's answer.
	CosmosMaxCustomProperties = 255
	// CosmosPropertyCapacityMessage is the Cosmos flavour's message where an entity has more
	// custom properties than it can hold (CosmosMaxCustomProperties).
	CosmosPropertyCapacityMessage = "The Cosmos flavour of conform holds at most 255 custom properties. Cosmos DB documents no practical limit, and no recorded answer shows it refusing more."
	// CosmosMaxPropertyNameLength bounds property names on the Cosmos flavour: none (0), as
	// a name of 256 characters was recorded accepted, a longer one is reported accepted, and no
	// refusal was seen (E-cosmos-property-limits).
	CosmosMaxPropertyNameLength = 0
)

// Cosmos's error messages where they differ from Storage's (E-cosmos-shapes).
var (
	// CosmosMessages are the messages of recorded Cosmos answers, by error code.
	CosmosMessages = map[string]string{
		"TableAlreadyExists": "The specified table already exists.",
		"NotImplemented":     "The requested operation is not supported.",
		"ResourceNotFound":   "The specified resource does not exist.",
	}
	// CosmosActivityCodes are the codes whose recorded messages carry an ActivityId line
	// (E-cosmos-empty-keys, E-cosmos-unsupported, E-cosmos-throttling).
	CosmosActivityCodes = map[string]bool{"PropertiesNeedValue": true, "NotImplemented": true}
)

const (
	// CosmosInvalidURLMessage is the message of the refusal of a $filter Cosmos cannot read
	// (E-cosmos-shapes).
	CosmosInvalidURLMessage = "Request url is invalid."
	// CosmosActivitySuffix follows the ActivityId's GUID on its line, as recorded
	// (E-cosmos-empty-keys).
	CosmosActivitySuffix = ", documentdb-dotnet-sdk/2.14.0 Host/64-bit MicrosoftWindowsNT/10.0.19041.0"
	// CosmosThrottledLines follow the first line of a 429's message, as recorded
	// (E-cosmos-throttling), with the activity id, three resource ids, a replica number and
	// the request's start and end times; the recorded request statistics between the times
	// and the SDK line are left out.
	CosmosThrottledLines = "\r\nActivityId: %s, Request URI: /apps/%s/services/%s/partitions/%s/replicas/%ds/, RequestStats: \r\nRequestStartTime: %s, RequestEndTime: %s,  Number of regions attempted:1\r\n, SDK: documentdb-dotnet-sdk/2.14.0 Host/64-bit MicrosoftWindowsNT/10.0.19041.0"
)
