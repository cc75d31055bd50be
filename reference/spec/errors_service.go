package spec

// Sources of the account-wide parts of the protocol: account SAS, service properties and
// statistics, CORS and OAuth (EVIDENCE.md, Service surface).
const (
	SrcAccountSAS        = "https://learn.microsoft.com/en-us/rest/api/storageservices/create-account-sas"
	SrcStoredPolicy      = "https://learn.microsoft.com/en-us/rest/api/storageservices/define-stored-access-policy"
	SrcTableACL          = "https://learn.microsoft.com/en-us/rest/api/storageservices/get-table-acl"
	SrcSetTableACL       = "https://learn.microsoft.com/en-us/rest/api/storageservices/set-table-acl"
	SrcServiceProperties = "https://learn.microsoft.com/en-us/rest/api/storageservices/set-table-service-properties"
	SrcServiceStats      = "https://learn.microsoft.com/en-us/rest/api/storageservices/get-table-service-stats"
	SrcCORS              = "https://learn.microsoft.com/en-us/rest/api/storageservices/cross-origin-resource-sharing--cors--support-for-the-azure-storage-services"
	SrcOAuth             = "https://learn.microsoft.com/en-us/rest/api/storageservices/authorize-with-azure-active-directory"
	// SrcGoSDKTests are the live tests of the Go SDK (aztables), whose recordings show the
	// service's answers to service properties, CORS and ACL limits.
	SrcGoSDKTests = "https://github.com/Azure/azure-sdk-for-go/blob/main/sdk/data/aztables/service_client_test.go"
)

// Error codes of account SAS, CORS and OAuth.
var (
	ErrAuthSourceIPMismatch = register(ErrorCode{"AuthorizationSourceIPMismatch", 403, "This request is not authorized to perform this operation using this source IP.", SrcCommonErrors})
	ErrAuthProtocolMismatch = register(ErrorCode{"AuthorizationProtocolMismatch", 403, "This request is not authorized to perform this operation using this protocol.", SrcCommonErrors})
	ErrAuthServiceMismatch  = register(ErrorCode{"AuthorizationServiceMismatch", 403, "This request is not authorized to perform this operation using this service.", SrcCommonErrors})
	// ErrCorsPreflightFailure answers a preflight that no CORS rule allows (403, SrcCORS); the
	// code is the reference's choice, the documentation names only the status.
	ErrCorsPreflightFailure = register(ErrorCode{"CorsPreflightFailure", 403, "CORS not enabled or no matching rule found for this request.", SrcCORS})
	// ErrBearerRefused answers a bearer token that is not accepted: 401 with the
	// WWW-Authenticate challenge (SrcOAuth).
	ErrBearerRefused = ErrorCode{"InvalidAuthenticationInfo", 401, "Server failed to authenticate the request. Please refer to the information in the www-authenticate header.", SrcOAuth}
)

// Limits of the service properties (SrcServiceProperties).
const (
	MaxCORSRules          = 5
	MaxRetentionDays      = 365
	MaxCORSHeaderPatterns = 64
)
