// Package odata parses and evaluates the OData query options that the Table service
// supports: $filter, $select and $top (EVIDENCE.md 3.1-3.4; QTE
// https://learn.microsoft.com/en-us/rest/api/storageservices/querying-tables-and-entities).
//
// ParseFilter compiles a $filter expression once into a Filter that the in-memory reference
// evaluates against each candidate entity (Match) and asks for key bounds (KeyRange) so that
// it can seek in its ordered index instead of scanning. ParseTableFilter does the same for
// Query Tables, where the only property is TableName. ParseTop and ParseSelect validate the
// other two options. QuoteString and FormatLiteral build literals for clients.
//
// Every failure is a *spec.Error: InvalidInput for syntax errors (with the service's
// "Syntax error at position N in '...'" message), for null literals and for filters over
// the comparison or nesting limits; NotImplemented for comparisons that do not pit one
// property against one constant, as live Storage answers. How values of different EDM types
// compare, and what a missing property yields, is decided in one place: the comment at the
// top of eval.go.
//
// It imports only the standard library, reference/api and reference/spec.
package odata
