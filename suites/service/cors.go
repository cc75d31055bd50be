package service

import (
	"context"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/framework"
)

// withCORSRule stores exampleRule as the account's only CORS rule (the old settings come
// back when the spec ends).
func withCORSRule(ctx context.Context, f *framework.F) driver.RawHTTP {
	GinkgoHelper()
	raw, _ := withAccountSettings(ctx, f)
	a := setProperties(ctx, raw, render(serviceProperties{Cors: &corsRules{Rules: []corsRule{exampleRule}}}))
	Expect(a.status).To(Equal(http.StatusAccepted), "Set Table Service Properties with a CORS rule: %s", a)
	return raw
}

// preflight sends an OPTIONS request for the Tables resource.
func preflight(ctx context.Context, raw driver.RawHTTP, origin, method, headers string) answer {
	GinkgoHelper()
	h := map[string]string{"Origin": origin, "Access-Control-Request-Method": method}
	if headers != "" {
		h["Access-Control-Request-Headers"] = headers
	}
	return sendXML(ctx, raw, http.MethodOptions, "Tables", nil, h, nil)
}

var _ = framework.Describe("CORS", func(f *framework.F) {
	f.DescribeTable("service.cors.preflight-allowed", "answers a preflight that a stored rule allows",
		func(ctx context.Context, method, headers string) {
			raw := withCORSRule(ctx, f)
			a := preflight(ctx, raw, exampleRule.AllowedOrigins, method, headers)
			Expect(a.status).To(Equal(http.StatusOK), "preflight: %s", a)
			Expect(a.header.Get("Access-Control-Allow-Origin")).To(BeElementOf(exampleRule.AllowedOrigins, "*"), "Access-Control-Allow-Origin: %s", a)
			Expect(strings.ToUpper(a.header.Get("Access-Control-Allow-Methods"))).To(ContainSubstring(method), "Access-Control-Allow-Methods: %s", a)
			Expect(a.header.Get("Access-Control-Max-Age")).To(Equal("500"), "Access-Control-Max-Age: %s", a)
		},
		Entry("a GET", "GET", ""),
		Entry("a PUT with a header matching a prefix pattern", "PUT", "x-ms-meta-data-one"),
		Serial,
	)

	f.DescribeTable("service.cors.preflight-refused", "refuses a preflight that no stored rule allows with 403",
		func(ctx context.Context, origin, method, headers string) {
			raw := withCORSRule(ctx, f)
			a := preflight(ctx, raw, origin, method, headers)
			Expect(a.status).To(Equal(http.StatusForbidden), "preflight: %s", a)
			f.Choice("refused preflight", a.outcome())
			Expect(a.header.Get("Access-Control-Allow-Origin")).To(BeEmpty(), "a refused preflight allowed the origin: %s", a)
		},
		Entry("from another origin", "https://elsewhere.conform.example", "GET", ""),
		Entry("for a method the rule does not list", exampleRule.AllowedOrigins, "DELETE", ""),
		Entry("with a header the rule does not list", exampleRule.AllowedOrigins, "GET", "x-custom-header"),
		Serial,
	)

	f.DescribeTable("service.cors.preflight-missing-header", "refuses a preflight without a required CORS header with 400",
		func(ctx context.Context, origin, method string) {
			raw := withCORSRule(ctx, f)
			h := map[string]string{}
			if origin != "" {
				h["Origin"] = origin
			}
			if method != "" {
				h["Access-Control-Request-Method"] = method
			}
			a := sendXML(ctx, raw, http.MethodOptions, "Tables", nil, h, nil)
			Expect(a.status).To(Equal(http.StatusBadRequest), "preflight: %s", a)
			f.Choice("preflight without a required CORS header", a.outcome())
			Expect(a.header.Get("Access-Control-Allow-Origin")).To(BeEmpty(), "a refused preflight allowed the origin: %s", a)
		},
		Entry("without Access-Control-Request-Method", exampleRule.AllowedOrigins, ""),
		Entry("without Origin", "", "GET"),
		Serial,
	)

	f.It("service.cors.vary", "records whether Vary: Origin is sent where the answer does or does not depend on the origin", func(ctx context.Context) {
		raw, _ := withAccountSettings(ctx, f)
		anyOrigin := exampleRule
		anyOrigin.AllowedOrigins = "*"
		set := setProperties(ctx, raw, render(serviceProperties{Cors: &corsRules{Rules: []corsRule{anyOrigin}}}))
		Expect(set.status).To(Equal(http.StatusAccepted), "Set Table Service Properties with a rule for any origin: %s", set)
		a := sendXML(ctx, raw, http.MethodGet, propertiesPath, nil, map[string]string{"Origin": "https://any.conform.example"}, nil)
		Expect(a.status).To(Equal(http.StatusOK), "Get Table Service Properties: %s", a)
		f.Requires("service.cors.actual-headers", "a request from an origin a rule for any origin allows gets Access-Control-Allow-Origin: *", func() {
			Expect(a.header.Get("Access-Control-Allow-Origin")).To(Equal("*"), "a rule for any origin: %s", a)
		})
		f.Choice("Vary: Origin where a rule for any origin allows the Origin", varyOrigin(a))
		set = setProperties(ctx, raw, render(serviceProperties{Cors: &corsRules{Rules: []corsRule{exampleRule}}}))
		Expect(set.status).To(Equal(http.StatusAccepted), "Set Table Service Properties with a rule for one origin: %s", set)
		a = sendXML(ctx, raw, http.MethodGet, propertiesPath, nil, map[string]string{"Origin": exampleRule.AllowedOrigins}, nil)
		f.Requires("service.cors.actual-headers", "a request from the origin a rule names gets Access-Control-Allow-Origin", func() {
			Expect(a.header.Get("Access-Control-Allow-Origin")).To(Equal(exampleRule.AllowedOrigins), "a rule for one origin: %s", a)
		})
		f.Choice("Vary: Origin where a rule naming the Origin allows it", varyOrigin(a))
	}, Serial)

	f.It("service.cors.actual-headers", "adds the CORS headers to a request from an allowed origin", func(ctx context.Context) {
		raw := withCORSRule(ctx, f)
		a := sendXML(ctx, raw, http.MethodGet, propertiesPath, nil, map[string]string{"Origin": exampleRule.AllowedOrigins}, nil)
		Expect(a.status).To(Equal(http.StatusOK), "Get Table Service Properties from an allowed origin: %s", a)
		Expect(a.header.Get("Access-Control-Allow-Origin")).To(BeElementOf(exampleRule.AllowedOrigins, "*"), "Access-Control-Allow-Origin: %s", a)
		Expect(strings.ToLower(a.header.Get("Access-Control-Expose-Headers"))).To(ContainSubstring("x-ms-meta-source"), "Access-Control-Expose-Headers: %s", a)
		other := sendXML(ctx, raw, http.MethodGet, propertiesPath, nil, map[string]string{"Origin": "https://elsewhere.conform.example"}, nil)
		Expect(other.header.Get("Access-Control-Allow-Origin")).To(BeEmpty(), "a request from an origin no rule allows got CORS headers: %s", other)
	}, Serial)
})

// varyOrigin says whether an answer's Vary header names Origin.
func varyOrigin(a answer) string {
	for _, v := range a.header.Values("Vary") {
		for _, field := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(field), "Origin") {
				return "sent"
			}
		}
	}
	return "left out"
}
