package spec

// Rules of the protocol surface the SDKs use besides the data operations: table ACLs,
// service properties and statistics, CORS, account SAS, stored access policies, the SAS's
// IP and protocol restrictions, bearer tokens, and the outer Accept of a batch
// (EVIDENCE.md, Service surface).
//
// Decisions on uncertain facts:
//   - Too many CORS rules or a retention over 365 days: the recordings show a 400 without
//     the code; any 400 passes and the code is recorded.
//   - A preflight no rule allows: 403, the code is recorded.
//   - A bearer token that cannot be verified: refused with 401 or 403 (MUST); 401
//     InvalidAuthenticationInfo with a Bearer challenge is the documented answer (SHOULD).

// AreaService is the area of the account-wide resources: table ACL, service properties,
// statistics and CORS (suites/service).
const AreaService Area = "service"

// FService is the feature of the service properties, statistics and CORS.
const FService Feature = "service-properties"

const (
	srcPythonACLRecording     = "https://github.com/Azure/azure-sdk-for-python/blob/main/sdk/tables/azure-data-tables/tests/recordings/test_table.pyTestTabletest_get_table_acl.json"
	srcPythonACLMissingRecord = "https://github.com/Azure/azure-sdk-for-python/blob/main/sdk/tables/azure-data-tables/tests/recordings/test_table_aad.pyTestTableAADtest_aad_access_policy_error.json"
	srcPythonACLPartial       = "https://github.com/Azure/azure-sdk-for-python/blob/main/sdk/tables/azure-data-tables/tests/recordings/test_table.pyTestTabletest_set_table_acl_with_empty_signed_identifier.json"
	srcGoTableClientTests     = "https://github.com/Azure/azure-sdk-for-go/blob/main/sdk/data/aztables/client_test.go"
	srcLegacyNodeSDK          = "https://github.com/Azure/azure-storage-node/blob/master/lib/services/table/tableservice.js"
)

func init() {
	svc := func(r Rule) Rule {
		r.Area = AreaService
		if r.Feature == "" {
			r.Feature = FService
		}
		return r
	}
	acl := func(r Rule) Rule {
		r.Area, r.Feature = AreaService, FACL
		return r
	}
	auth := func(r Rule) Rule {
		r.Area, r.Feature = AreaAuth, FSAS
		return r
	}
	AddRules(
		acl(Rule{ID: "service.acl.accept-xml", Level: Must, Evidence: []Fact{traffic("E-acl-xml")},
			Text:   "Get Table ACL and Set Table ACL MUST be served whatever JSON-only Accept rules apply to data operations: with Accept application/xml or application/atom+xml,application/xml (as the Go, Python and legacy Node SDKs send) they answer 200 with XML and 204.",
			Source: srcPythonACLRecording}),
		acl(Rule{ID: "service.acl.empty", Level: Must, Evidence: []Fact{traffic("E-acl-xml")},
			Text:   "Get Table ACL of a table without stored access policies MUST answer 200 with an XML SignedIdentifiers element that holds no SignedIdentifier.",
			Source: srcPythonACLRecording}),
		acl(Rule{ID: "service.acl.roundtrip", Level: Must, Evidence: []Fact{traffic("E-table-ops-recorded")},
			Text:   "The stored access policies set with Set Table ACL MUST be answered by Get Table ACL with the same Id, Start, Expiry and Permission.",
			Source: SrcSetTableACL}),
		acl(Rule{ID: "service.acl.partial", Level: Must, Evidence: []Fact{traffic("E-acl-partial")},
			Text:   "Set Table ACL MUST accept signed identifiers without an access policy, with an empty one or with only some of Start, Expiry and Permission, and Get Table ACL MUST answer each as set: an identifier without any field has no AccessPolicy element.",
			Source: srcPythonACLPartial}),
		acl(Rule{ID: "service.acl.missing-table", Level: Must, Evidence: []Fact{traffic("E-acl-missing-table")},
			Text:   "Get Table ACL and Set Table ACL on a table that does not exist MUST answer 404 ResourceNotFound.",
			Source: srcPythonACLMissingRecord}),
		acl(Rule{ID: "service.acl.error-xml", Level: Must, Evidence: []Fact{traffic("E-acl-error-xml")},
			Text:   "An error of Get or Set Table ACL MUST be written in the m: prefixed OData XML form, <m:error> with <m:code> and <m:message xml:lang=\"en-US\">, as Storage answers (E-acl-error-xml).",
			Source: srcPythonACLMissingRecord}),
		acl(Rule{ID: "service.acl.too-many", Level: Should, Evidence: []Fact{doc("E-acl-too-many", "at most five stored access policies"), open("E-acl-too-many-code", "the 400 and its code InvalidXmlDocument")},
			Text:   "Set Table ACL with more than five signed identifiers SHOULD be refused with 400 InvalidXmlDocument, leaving the stored policies unchanged.",
			Source: srcGoTableClientTests}),
		svc(Rule{ID: "service.properties.roundtrip", Level: Must, Evidence: []Fact{doc("E-service-properties")},
			Text:   "Set Table Service Properties MUST answer 202, and Get Table Service Properties MUST then answer 200 with the logging, metrics and CORS settings that were set.",
			Source: SrcServiceProperties}),
		svc(Rule{ID: "service.properties.keeps-omitted", Level: Must, Evidence: []Fact{doc("E-service-properties")},
			Text:   "Set Table Service Properties MUST keep the settings of every section (Logging, HourMetrics, MinuteMetrics, Cors) the request leaves out.",
			Source: SrcServiceProperties + "#request-body"}),
		svc(Rule{ID: "service.properties.cors-limit", Level: Should, Evidence: []Fact{sdk("E-service-properties-limits", "the Go SDK's live test expects an error")},
			Text:   "Set Table Service Properties with more than five CORS rules SHOULD be refused with 400, leaving the properties unchanged (the code is recorded).",
			Source: SrcGoSDKTests}),
		svc(Rule{ID: "service.properties.retention-limit", Level: Should, Evidence: []Fact{sdk("E-service-properties-limits", "the Go SDK's live test expects an error")},
			Text:   "Set Table Service Properties with a retention policy of more than 365 days SHOULD be refused with 400, leaving the properties unchanged (the code is recorded).",
			Source: SrcGoSDKTests}),
		svc(Rule{ID: "service.stats.secondary", Level: Must, Evidence: []Fact{doc("E-service-stats")},
			Text:   "Get Table Service Stats on the secondary location (<account>-secondary) MUST answer 200 with a GeoReplication element holding a Status (live, bootstrap or unavailable) and, when it has one, a LastSyncTime in RFC 1123 form.",
			Source: SrcServiceStats}),
		svc(Rule{ID: "service.secondary.read-only", Level: Must,
			Evidence: []Fact{doc("E-secondary-read-only", "the secondary location is a read-only copy"),
				{Cite: "E-secondary-read-only-answer", Strength: Open, Recorded: true, Note: "the status and code: Blob's live answer is 403 \"Write operations are not allowed\""}},
			Text:   "A write addressed to the secondary location (<account>-secondary): Insert, Update, Merge, Delete Entity and their upserts, Create and Delete Table, Set Table ACL and $batch, MUST be refused with a 4xx and change nothing; the reference answers 403 AuthorizationFailure, as Blob answers 403, and the answer is recorded.",
			Source: SrcServiceStats}),
		svc(Rule{ID: "service.cors.preflight-allowed", Level: Must, Evidence: []Fact{doc("E-cors")},
			Text:   "A preflight OPTIONS request whose origin, method and headers a stored CORS rule allows MUST answer 200 with Access-Control-Allow-Origin, Access-Control-Allow-Methods and Access-Control-Max-Age.",
			Source: SrcCORS + "#preflight-request"}),
		svc(Rule{ID: "service.cors.preflight-refused", Level: Must, Evidence: []Fact{doc("E-cors")},
			Text:   "A preflight OPTIONS request that no stored CORS rule allows MUST be refused with 403 (the code is recorded).",
			Source: SrcCORS + "#preflight-request"}),
		svc(Rule{ID: "service.cors.preflight-missing-header", Level: Must, Evidence: []Fact{doc("E-cors-preflight-missing")},
			Text:   "A preflight OPTIONS request without Origin or Access-Control-Request-Method MUST be refused with 400; the code (InvalidHeaderValue, as Azurite answers) is recorded (E-cors-preflight-missing).",
			Source: SrcCORS + "#preflight-request"}),
		svc(Rule{ID: "service.cors.vary", Level: May,
			Text:   "A GET whose Origin a CORS rule for any origin (*) allows MAY leave out Vary: Origin, and one a rule naming that origin allows MAY carry it; which each answer does is recorded (E-cors-vary: the documented section could not be read, Azurite does so).",
			Source: SrcCORS + "#understanding-the-vary-header"}),
		svc(Rule{ID: "service.cors.actual-headers", Level: Must, Evidence: []Fact{doc("E-cors")},
			Text:   "A request whose Origin a stored CORS rule allows for its method MUST be answered with Access-Control-Allow-Origin (that origin, or * for a rule allowing any) and the rule's exposed headers in Access-Control-Expose-Headers.",
			Source: SrcCORS + "#actual-request"}),

		Rule{ID: "protocol.batch.outer-accept", Level: Must, Area: AreaProtocol, Feature: FBatch,
			Text:   "A $batch request MUST be served whatever its outer Accept header says: the legacy Node SDK sends application/atom+xml,application/xml and gets a 202 whose operations are answered as their own parts ask.",
			Source: srcLegacyNodeSDK,
			Evidence: []Fact{{Cite: "E-batch-outer-accept", Strength: Traffic,
				Note: "the legacy Node SDK's recorded $batch, answered 202 by Storage; the outer Accept it sends is read from its source"}}},

		auth(Rule{ID: "auth.account-sas.resource-types", Level: Must, Evidence: []Fact{doc("E-account-sas")},
			Text:   "An account SAS MUST allow an operation only on the resource types it signs (s: service properties and stats, c: tables, o: entities) and refuse the others with 403 AuthorizationResourceTypeMismatch, changing nothing.",
			Source: SrcAccountSAS + "#specify-the-account-sas-parameters"}),
		auth(Rule{ID: "auth.account-sas.permissions", Level: Must, Evidence: []Fact{doc("E-account-sas")},
			Text:   "An account SAS MUST allow each operation only with its permission (r read entities, a insert, u update and merge, d delete, l list tables, w create tables) and refuse it without with 403 AuthorizationPermissionMismatch, changing nothing.",
			Source: SrcAccountSAS + "#table-service"}),
		auth(Rule{ID: "auth.account-sas.service", Level: Must, Evidence: []Fact{doc("E-account-sas")},
			Text:   "An account SAS whose signed services (ss) leave out the Table service (t) MUST be refused with 403 AuthorizationServiceMismatch.",
			Source: SrcAccountSAS + "#specify-the-account-sas-parameters"}),
		auth(Rule{ID: "auth.account-sas.expired", Level: Must, Evidence: []Fact{doc("E-account-sas")},
			Text:   "An account SAS whose expiry time has passed or whose start time is still in the future MUST be refused with 403 AuthenticationFailed.",
			Source: SrcAccountSAS}),
		auth(Rule{ID: "auth.account-sas.signature", Level: Must, Evidence: []Fact{doc("E-account-sas")},
			Text:   "An account SAS whose signature does not match its fields MUST be refused with 403 AuthenticationFailed, changing nothing.",
			Source: SrcAccountSAS + "#construct-the-signature-string"}),
		auth(Rule{ID: "auth.sas.ip", Level: Must, Evidence: []Fact{doc("E-sas-ip-protocol")},
			Text:   "A service or account SAS with a signed IP range (sip) MUST allow requests from inside the range and refuse the others with 403 AuthorizationSourceIPMismatch.",
			Source: SrcServiceSAS + "#specify-an-ip-address-or-ip-range"}),
		auth(Rule{ID: "auth.sas.protocol", Level: Must, Evidence: []Fact{doc("E-sas-ip-protocol")},
			Text:   "A service or account SAS with spr=https MUST be refused over plain HTTP with 403 AuthorizationProtocolMismatch; spr=https,http MUST be allowed over either.",
			Source: SrcServiceSAS + "#specify-the-http-protocol"}),
		auth(Rule{ID: "auth.sas.stored-policy", Level: Must, Evidence: []Fact{doc("E-stored-policy")},
			Text:   "A service SAS naming a stored access policy (si) of its table MUST take the permissions and validity the SAS leaves out from that policy: the policy's permissions are allowed, the others refused with 403.",
			Source: SrcStoredPolicy}),
		auth(Rule{ID: "auth.sas.stored-policy-revoked", Level: Must, Evidence: []Fact{doc("E-stored-policy")},
			Text:   "Once the stored access policy a SAS names is removed from the table's ACL, the SAS MUST be refused with 403 (within the 30 seconds the documentation allows).",
			Source: SrcStoredPolicy + "#modify-or-revoke-a-stored-access-policy"}),
		auth(Rule{ID: "auth.sas.stored-policy-unknown", Level: Must, Evidence: []Fact{doc("E-stored-policy")},
			Text:   "A service SAS whose signed identifier (si) names no stored access policy of its table MUST be refused with 403 AuthenticationFailed, changing nothing.",
			Source: SrcStoredPolicy}),
		Rule{ID: "auth.bearer.refused", Level: Must, Area: AreaAuth, Evidence: []Fact{traffic("E-oauth-bearer")},
			Text:   "A bearer token that no trusted issuer signed MUST be refused with 401 or 403, without any effect and without revealing data (the status and code are recorded).",
			Source: SrcOAuth},
		Rule{ID: "auth.bearer.challenge", Level: Should, Area: AreaAuth,
			Text:   "A refused bearer token SHOULD be answered 401 InvalidAuthenticationInfo with a WWW-Authenticate: Bearer challenge naming authorization_uri and resource_id.",
			Source: SrcOAuth},
	)
}

// AccountWide says whether r's specs read or change settings of the whole account (service
// properties, statistics, CORS) rather than tables of their own: conform runs them alone,
// after a backend's other specs, and against an endpoint that is not the reference or an
// emulator only with CONFORM_ALLOW_ACCOUNT_CHANGES=1.
func (r Rule) AccountWide() bool { return r.Area == AreaService && r.Feature == FService }
