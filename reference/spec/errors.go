package spec

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ErrorCode is one documented error: its code, HTTP status, the message the service sends
// and where that is documented or observed.
type ErrorCode struct {
	Code    string
	Status  int
	Message string
	Source  string
}

// New returns an Error carrying c's status, code and message.
func (c ErrorCode) New() *Error {
	return &Error{Status: c.Status, Code: c.Code, Message: c.Message}
}

// Newf returns an Error carrying c's status and code with a message of its own.
func (c ErrorCode) Newf(format string, args ...any) *Error {
	return &Error{Status: c.Status, Code: c.Code, Message: fmt.Sprintf(format, args...)}
}

// Error is a failure answered by a service: the HTTP status, the error code (from the
// x-ms-error-code header or the odata.error body), the message and the request id. For a
// failed entity group transaction FailedIndex is the zero-based index of the failing
// operation when Indexed is set (the service prefixes the message with "N:").
type Error struct {
	Status      int
	Code        string
	Message     string
	RequestID   string
	FailedIndex int
	Indexed     bool
	// RetryAfter is the wait a throttling answer asked for (retry-after-ms,
	// x-ms-retry-after-ms or Retry-After; EVIDENCE.md E-sdk-retry), zero when it asked none.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%d %s", e.Status, e.Code)
	if e.Indexed {
		s += fmt.Sprintf(" (operation %d)", e.FailedIndex)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.RequestID != "" {
		s += " [request " + e.RequestID + "]"
	}
	return s
}

// AtIndex returns a copy of e marked as the failure of batch operation i.
func (e *Error) AtIndex(i int) *Error {
	c := *e
	c.FailedIndex, c.Indexed = i, true
	return &c
}

// The error codes of the Table service (TERR) and the common ones that tables answer
// (CERR). Messages are the service's own, typos included, where traffic shows them.
var (
	ErrDuplicateProperties = register(ErrorCode{"DuplicatePropertiesSpecified", http.StatusBadRequest, "A property is specified more than one time.", SrcTableErrors})
	// ErrEntityNotFound is documented (TERR) but Storage answers ResourceNotFound for a
	// missing entity (CONFIRMED-TRAFFIC); the reference uses ErrResourceNotFound.
	ErrEntityNotFound      = register(ErrorCode{"EntityNotFound", http.StatusNotFound, "The specified entity does not exist.", SrcTableErrors})
	ErrEntityAlreadyExists = register(ErrorCode{"EntityAlreadyExists", http.StatusConflict, "The specified entity already exists.", SrcTraffic})
	ErrEntityTooLarge      = register(ErrorCode{"EntityTooLarge", http.StatusBadRequest, "The entity is larger than the maximum size permitted.", SrcTableErrors})
	ErrHostInfoNotPresent  = register(ErrorCode{"HostInformationNotPresent", http.StatusBadRequest, "The required host information is not present in the request. You must send a non-empty Host header or include the absolute URI in the request line.", SrcTableErrors})
	// ErrInvalidDuplicateRow carries the message real traffic shows, not TERR's.
	ErrInvalidDuplicateRow   = register(ErrorCode{"InvalidDuplicateRow", http.StatusBadRequest, "The batch request contains multiple changes with same row key. An entity can appear only once in a batch request.", SrcTraffic})
	ErrInvalidInput          = register(ErrorCode{"InvalidInput", http.StatusBadRequest, "One of the request inputs is not valid.", SrcTableErrors})
	ErrInvalidValueType      = register(ErrorCode{"InvalidValueType", http.StatusBadRequest, "The value specified is invalid.", SrcTableErrors})
	ErrJSONFormatUnsupported = register(ErrorCode{"JsonFormatNotSupported", http.StatusUnsupportedMediaType, "JSON format is not supported.", SrcTableErrors})
	ErrAtomFormatUnsupported = register(ErrorCode{"AtomFormatNotSupported", http.StatusUnsupportedMediaType, "Atom format is not supported.", SrcTableErrors})
	ErrMethodNotAllowed      = register(ErrorCode{"MethodNotAllowed", http.StatusMethodNotAllowed, "The requested method is not allowed on the specified resource.", SrcTableErrors})
	ErrNotImplemented        = register(ErrorCode{"NotImplemented", http.StatusNotImplemented, "The requested operation is not implemented on the specified resource.", SrcTableErrors})
	ErrOutOfRangeInput       = register(ErrorCode{"OutOfRangeInput", http.StatusBadRequest, "One of the request inputs is out of range.", SrcCommonErrors})
	// The message is Storage's answer (E-insert-no-keys); TERR words it "Values have not been
	// specified for all properties in the entity."
	ErrPropertiesNeedValue   = register(ErrorCode{"PropertiesNeedValue", http.StatusBadRequest, "The values are not specified for all properties in the entity.", SrcTableErrors})
	ErrPropertyNameInvalid   = register(ErrorCode{"PropertyNameInvalid", http.StatusBadRequest, "The property name is invalid.", SrcTableErrors})
	ErrPropertyNameTooLong   = register(ErrorCode{"PropertyNameTooLong", http.StatusBadRequest, "The property name exceeds the maximum allowed length (255).", SrcTraffic})
	ErrPropertyValueTooLarge = register(ErrorCode{"PropertyValueTooLarge", http.StatusBadRequest, "The property value exceeds the maximum allowed size (64KB).", SrcTableErrors})
	ErrTableAlreadyExists    = register(ErrorCode{"TableAlreadyExists", http.StatusConflict, "The table specified already exists.", SrcTraffic})
	ErrTableBeingDeleted     = register(ErrorCode{"TableBeingDeleted", http.StatusConflict, "The specified table is being deleted.", SrcTableErrors})
	ErrTableNotFound         = register(ErrorCode{"TableNotFound", http.StatusNotFound, "The table specified does not exist.", SrcTableErrors})
	ErrTooManyProperties     = register(ErrorCode{"TooManyProperties", http.StatusBadRequest, "The entity contains more properties than allowed. Each entity can include up to 252 properties to store data. Each entity also has 3 system properties.", SrcTraffic})
	ErrUpdateCondition       = register(ErrorCode{"UpdateConditionNotSatisfied", http.StatusPreconditionFailed, "The update condition specified in the request was not satisfied.", SrcTraffic})
	ErrXMethodIncorrectCount = register(ErrorCode{"XMethodIncorrectCount", http.StatusBadRequest, "More than one X-HTTP-Method is specified.", SrcTableErrors})
	ErrXMethodIncorrectValue = register(ErrorCode{"XMethodIncorrectValue", http.StatusBadRequest, "The specified X-HTTP-Method is invalid.", SrcTableErrors})
	ErrXMethodNotUsingPost   = register(ErrorCode{"XMethodNotUsingPost", http.StatusBadRequest, "The request uses X-HTTP-Method with an HTTP verb other than POST.", SrcTableErrors})
	// ErrDifferentPartitions is in the Java and .NET SDK enums, not in TERR (UNCERTAIN).
	ErrDifferentPartitions = register(ErrorCode{"CommandsInBatchActOnDifferentPartitions", http.StatusBadRequest, "All commands in a batch must operate on same entity group.", SrcBatch})
	// ErrInvalidResourceName carries the service's own typo "specifed" (CONFIRMED-TRAFFIC).
	ErrInvalidResourceName = register(ErrorCode{"InvalidResourceName", http.StatusBadRequest, "The specifed resource name contains invalid characters.", SrcTraffic})

	ErrResourceNotFound         = register(ErrorCode{"ResourceNotFound", http.StatusNotFound, "The specified resource does not exist.", SrcTraffic})
	ErrAuthenticationFailed     = register(ErrorCode{"AuthenticationFailed", http.StatusForbidden, "Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature.", SrcCommonErrors})
	ErrAuthorizationFailure     = register(ErrorCode{"AuthorizationFailure", http.StatusForbidden, "This request is not authorized to perform this operation.", SrcCommonErrors})
	ErrAuthPermissionMismatch   = register(ErrorCode{"AuthorizationPermissionMismatch", http.StatusForbidden, "This request is not authorized to perform this operation using this permission.", SrcCommonErrors})
	ErrAuthResourceTypeMismatch = register(ErrorCode{"AuthorizationResourceTypeMismatch", http.StatusForbidden, "This request is not authorized to perform this operation using this resource type.", SrcCommonErrors})
	ErrNoAuthenticationInfo     = register(ErrorCode{"NoAuthenticationInformation", http.StatusUnauthorized, "Server failed to authenticate the request. Please refer to the information in the www-authenticate header.", SrcCommonErrors})
	ErrInvalidAuthInfo          = register(ErrorCode{"InvalidAuthenticationInfo", http.StatusBadRequest, "Authentication information is not given in the correct format. Check the value of Authorization header.", SrcCommonErrors})
	ErrInvalidHeaderValue       = register(ErrorCode{"InvalidHeaderValue", http.StatusBadRequest, "The value for one of the HTTP headers is not in the correct format.", SrcCommonErrors})
	ErrInvalidQueryParameter    = register(ErrorCode{"InvalidQueryParameterValue", http.StatusBadRequest, "Value for one of the query parameters specified in the request URI is invalid.", SrcCommonErrors})
	ErrInvalidURI               = register(ErrorCode{"InvalidUri", http.StatusBadRequest, "The requested URI does not represent any resource on the server.", SrcCommonErrors})
	ErrMissingRequiredHeader    = register(ErrorCode{"MissingRequiredHeader", http.StatusBadRequest, "An HTTP header that's mandatory for this request is not specified.", SrcCommonErrors})
	ErrOutOfRangeQueryParam     = register(ErrorCode{"OutOfRangeQueryParameterValue", http.StatusBadRequest, "A query parameter specified in the request URI is outside the permissible range.", SrcCommonErrors})
	ErrRequestBodyTooLarge      = register(ErrorCode{"RequestBodyTooLarge", http.StatusRequestEntityTooLarge, "The request body is too large and exceeds the maximum permissible limit.", SrcCommonErrors})
	ErrUnsupportedHTTPVerb      = register(ErrorCode{"UnsupportedHttpVerb", http.StatusMethodNotAllowed, "The resource doesn't support the specified HTTP verb.", SrcCommonErrors})
	ErrInvalidXMLDocument       = register(ErrorCode{"InvalidXmlDocument", http.StatusBadRequest, "The XML specified is not syntactically valid.", SrcCommonErrors})
	ErrInternalError            = register(ErrorCode{"InternalError", http.StatusInternalServerError, "The server encountered an internal error. Please retry the request.", SrcCommonErrors})
	ErrOperationTimedOut        = register(ErrorCode{"OperationTimedOut", http.StatusInternalServerError, "The operation could not be completed within the permitted time.", SrcCommonErrors})
	ErrServerBusy               = register(ErrorCode{"ServerBusy", http.StatusServiceUnavailable, "The server is currently unable to receive requests. Please retry your request.", SrcCommonErrors})
)

// MissingEntityAnswers are the answers a MUST rule accepts for an entity that does not exist
// (EVIDENCE.md 11.3): 404 ResourceNotFound, which Storage sends (traffic), and 404
// EntityNotFound, which the documentation lists (TERR). Which of the two a backend sends is
// rule modify.missing.code's subject (SHOULD ResourceNotFound), no other rule's.
var MissingEntityAnswers = []ErrorCode{ErrResourceNotFound, ErrEntityNotFound}

// Codes returns the codes of errs, in order.
func Codes(errs ...ErrorCode) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Code
	}
	return out
}

// Messages for InvalidInput cases the documentation names (TERR) or traffic shows.
const (
	MsgBatchTooManyOps      = "The batch request operation exceeds the maximum 100 changes per change set."
	MsgIfNoneMatchPut       = "If-None-Match HTTP header cannot be specified for PUT operations."
	MsgIfNoneMatchDelete    = "If-None-Match HTTP header cannot be specified for DELETE operations."
	MsgBothIfMatchAndNone   = "Both If-Match and If-None-Match HTTP headers cannot be specified at the same time. Please specify either one of the headers or none of them."
	MsgInvalidETagFormat    = "The etag value '%s' specified in one of the request headers is not valid. Please make sure only one etag value is specified and is valid."
	MsgFilterSyntaxFormat   = "Syntax error at position %d in '%s'."
	MsgKeyInvalidFormat     = "The '%s' parameter of value '%s' is out of range."
	MsgTooManyComparisons   = "The filter has more than 15 comparisons."
	MsgTopOutOfRange        = "The $top query option must be between 1 and 1000."
	MsgBatchMixedRetrieve   = "A retrieve operation must be the only operation in a batch."
	MsgBatchPayloadTooLarge = "The batch request body exceeds the maximum size of 4 MiB."
	// MsgValueNotProcessed is Storage's InvalidInput message for a value it cannot store:
	// a Double beyond its range (E-double-out-of-range), an Int64 beyond 64 bits
	// (E-int64-overflow), an empty Edm.DateTime (E-datetime-empty).
	MsgValueNotProcessed = "An error occurred while processing this request."
	// MsgCORSHeaderMissing answers a CORS preflight without Origin or
	// Access-Control-Request-Method (E-cors-preflight-missing).
	MsgCORSHeaderMissing = "A required CORS header is not present."
	// MsgSecondaryReadOnly answers, with 403 AuthorizationFailure, a write addressed to the
	// secondary location (E-secondary-read-only: Blob's live answer is "Write operations
	// are not allowed").
	MsgSecondaryReadOnly = "Write operations are not allowed on the secondary location."
)

var errorCodes = map[string]ErrorCode{}

func register(c ErrorCode) ErrorCode {
	if _, dup := errorCodes[c.Code]; dup {
		panic("spec: error code registered twice: " + c.Code)
	}
	errorCodes[c.Code] = c
	return c
}

// LookupErrorCode returns the documented error with the given code.
func LookupErrorCode(code string) (ErrorCode, bool) {
	c, ok := errorCodes[code]
	return c, ok
}

// ErrorCodes returns every documented error code, ordered by code.
func ErrorCodes() []ErrorCode {
	out := make([]ErrorCode, 0, len(errorCodes))
	for _, c := range errorCodes {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out
}

// RetryAfter is the wait an answer asks for before a retry, read as the SDKs read it
// (EVIDENCE.md E-sdk-retry): retry-after-ms, then x-ms-retry-after-ms (milliseconds), then
// Retry-After (seconds, or an HTTP date after now). Zero when none holds a positive wait.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	for _, f := range [...]struct {
		name string
		unit time.Duration
	}{{"Retry-After-Ms", time.Millisecond}, {"X-Ms-Retry-After-Ms", time.Millisecond}, {"Retry-After", time.Second}} {
		v := strings.TrimSpace(h.Get(f.name))
		if v == "" {
			continue
		}
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 && n < int64(time.Hour/f.unit) {
			return time.Duration(n) * f.unit
		}
		if f.unit == time.Second {
			if t, err := http.ParseTime(v); err == nil && t.After(now) {
				return t.Sub(now)
			}
		}
	}
	return 0
}
