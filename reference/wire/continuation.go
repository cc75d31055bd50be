package wire

import (
	"net/http"
	"net/url"

	"github.com/tableconform/conform/reference/api"
)

// Continuation headers of query answers and the parameters that resume a query
// (EVIDENCE.md 3.5; QTP). The headers are absent on the last page.
const (
	HeaderNextPartitionKey = "x-ms-continuation-NextPartitionKey"
	HeaderNextRowKey       = "x-ms-continuation-NextRowKey"
	HeaderNextTableName    = "x-ms-continuation-NextTableName"

	ParamNextPartitionKey = "NextPartitionKey"
	ParamNextRowKey       = "NextRowKey"
	ParamNextTableName    = "NextTableName"
)

// ContinuationFromHeader reads the entity continuation of an answer.
func ContinuationFromHeader(h http.Header) api.Continuation {
	return api.Continuation{NextPartitionKey: h.Get(HeaderNextPartitionKey), NextRowKey: h.Get(HeaderNextRowKey)}
}

// SetContinuationHeader writes c into an answer; a zero c writes nothing.
func SetContinuationHeader(h http.Header, c api.Continuation) {
	if c.NextPartitionKey != "" {
		h.Set(HeaderNextPartitionKey, c.NextPartitionKey)
	}
	if c.NextRowKey != "" {
		h.Set(HeaderNextRowKey, c.NextRowKey)
	}
}

// AddContinuationQuery adds c's parameters to a follow-up request.
func AddContinuationQuery(q url.Values, c api.Continuation) {
	if c.NextPartitionKey != "" {
		q.Set(ParamNextPartitionKey, c.NextPartitionKey)
	}
	if c.NextRowKey != "" {
		q.Set(ParamNextRowKey, c.NextRowKey)
	}
}

// ContinuationFromQuery reads the continuation parameters of a request.
func ContinuationFromQuery(q url.Values) api.Continuation {
	return api.Continuation{NextPartitionKey: q.Get(ParamNextPartitionKey), NextRowKey: q.Get(ParamNextRowKey)}
}
