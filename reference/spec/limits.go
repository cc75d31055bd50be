package spec

import "time"

// Limits of the Table data model and API. Each constant cites its source; the choices for
// UNCERTAIN facts are stated beside them.
const (
	// MinTableNameLength and MaxTableNameLength bound a table name (DM: 3 to 63 characters).
	MinTableNameLength = 3
	MaxTableNameLength = 63

	// MaxKeyBytes is the size of a PartitionKey or RowKey: "up to 1 KiB" (DM). How it is
	// counted is UNCERTAIN (EVIDENCE.md 11.1); conform counts UTF-16 bytes, as the entity-size
	// accounting does, so 512 characters of the Basic Multilingual Plane fit (Azurite's own
	// cap is also 512 characters).
	MaxKeyBytes = 1024

	// MaxProperties is the total number of properties including the three system ones, and
	// MaxCustomProperties the number left for data (DM, SCALE; CONFIRMED-TRAFFIC).
	MaxProperties       = 255
	SystemProperties    = 3
	MaxCustomProperties = MaxProperties - SystemProperties

	// MaxPropertyNameLength is the length of a property name in characters (DM; traffic).
	MaxPropertyNameLength = 255

	// MaxStringChars is the length of an Edm.String in UTF-16 code units: 64 KiB (DM, and
	// 32K characters in the .NET client's TableConstants).
	MaxStringChars = 32 * 1024
	// MaxStoredStringUnits is the longest Edm.String the reference stores: a live answer
	// refused exactly 32 Ki units with 400 PropertyValueTooLarge (EVIDENCE.md 13,
	// E-string-32k-edge), so the edge itself is a MAY and the reference follows that answer.
	MaxStoredStringUnits = MaxStringChars - 1
	// SafeStringChars is the longest Edm.String the same live test saw stored: 32,000 units.
	SafeStringChars = 32000
	// MaxBinaryBytes is the size of an Edm.Binary value: 64 KiB (DM).
	MaxBinaryBytes = 64 * 1024

	// MaxEntityBytes is the size of an entity by the documented accounting (DM, SCALE,
	// SIZEBLOG). Exact enforcement is UNCERTAIN (EVIDENCE.md 11.11): conform applies EntitySize
	// below against 1 MiB.
	MaxEntityBytes = 1 << 20

	// MaxBatchOperations and MaxBatchBytes bound an entity group transaction (EGT).
	MaxBatchOperations = 100
	MaxBatchBytes      = 4 << 20

	// MaxPageSize is the most entities or tables one query page returns (QTP, QE, QT).
	MaxPageSize = 1000
	// MaxTop is the largest $top accepted. Above it Storage answers 400 (EVIDENCE.md 3.3); the
	// code is UNCERTAIN and conform uses InvalidInput.
	MaxTop = 1000

	// MaxFilterComparisons is the number of discrete comparisons in one $filter (QTE).
	// Enforcement is UNCERTAIN (EVIDENCE.md 11.8); the reference refuses more with InvalidInput.
	MaxFilterComparisons = 15

	// MaxSelectProperties is the number of properties one $select may name (QE).
	MaxSelectProperties = 255

	// MaxClientRequestIDLength bounds x-ms-client-request-id (visible ASCII; UE, DE, CT).
	MaxClientRequestIDLength = 1024

	// MaxStoredAccessPolicies is the number of stored access policies per table (SCALE).
	MaxStoredAccessPolicies = 5

	// MaxServerTimeout is the largest server timeout; larger values are cut to it (TMO).
	MaxServerTimeout = 30 * time.Second

	// MaxQueryExecution is the time one query request may run before the service returns a
	// partial page with a continuation (QTP).
	MaxQueryExecution = 5 * time.Second

	// TableNameReuseDelay is how long Storage documents a deleted table's name to stay
	// unusable: "at least 40 seconds" (DT; EVIDENCE.md 2.2). A spec that needs the name
	// again waits at least this long against a real endpoint.
	TableNameReuseDelay = 40 * time.Second

	// DefaultTableDeleteHold is how long the reference keeps a deleted table's name in the
	// TableBeingDeleted state. The service says "at least 40 seconds" (DT); the reference
	// defaults to a short hold so that suites stay fast, and tests set 0.
	DefaultTableDeleteHold = 2 * time.Second

	// MaxRequestBodyBytes bounds any request body: a larger one, an entity or a whole batch
	// with its multipart framing, is refused with 413 RequestBodyTooLarge (CERR, EGT;
	// EVIDENCE.md 13, E-body-too-large).
	MaxRequestBodyBytes = 4 << 20

	// MaxClockSkew is how far x-ms-date may be from the server's clock. The window is
	// UNCERTAIN (EVIDENCE.md 7.1); 15 minutes is the commonly cited figure.
	MaxClockSkew = 15 * time.Minute

	// APIVersion is the x-ms-version conform sends and the reference server reports.
	APIVersion = "2019-02-02"
)

// DateTime range (DM: UTC from 1601-01-01 to 9999-12-31).
var (
	MinDateTime = time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)
	MaxDateTime = time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC)
)

// ReservedTableNames cannot be created (DM: "Some table names are reserved, including
// tables"). The status is UNCERTAIN (EVIDENCE.md 11.2); the reference answers 400
// InvalidResourceName.
var ReservedTableNames = []string{"tables"}

// SystemPropertyNames are the names the service owns (DM).
var SystemPropertyNames = []string{"PartitionKey", "RowKey", "Timestamp"}

// Entity size accounting (SIZEBLOG; EVIDENCE.md 1.4): 4 bytes + 2×(len(PartitionKey)+len(RowKey))
// + for each custom property 8 + 2×len(name) + the value's size, lengths in UTF-16 code units.
const (
	SizeEntityOverhead   = 4
	SizePropertyOverhead = 8
	SizeStringOverhead   = 4
	SizeBinaryOverhead   = 4
	SizeDateTime         = 8
	SizeGuid             = 16
	SizeDouble           = 8
	SizeInt32            = 4
	SizeInt64            = 8
	SizeBoolean          = 1
)
