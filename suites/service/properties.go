package service

import (
	"context"
	"encoding/xml"
	"fmt"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/framework"
)

const propertiesPath = "?restype=service&comp=properties"

// serviceProperties is the XML of Get/Set Table Service Properties.
type serviceProperties struct {
	XMLName       xml.Name   `xml:"StorageServiceProperties"`
	Logging       *logging   `xml:"Logging,omitempty"`
	HourMetrics   *metrics   `xml:"HourMetrics,omitempty"`
	MinuteMetrics *metrics   `xml:"MinuteMetrics,omitempty"`
	Cors          *corsRules `xml:"Cors,omitempty"`
}

type logging struct {
	Version         string    `xml:"Version"`
	Delete          bool      `xml:"Delete"`
	Read            bool      `xml:"Read"`
	Write           bool      `xml:"Write"`
	RetentionPolicy retention `xml:"RetentionPolicy"`
}

type metrics struct {
	Version         string    `xml:"Version"`
	Enabled         bool      `xml:"Enabled"`
	IncludeAPIs     *bool     `xml:"IncludeAPIs,omitempty"`
	RetentionPolicy retention `xml:"RetentionPolicy"`
}

type retention struct {
	Enabled bool `xml:"Enabled"`
	Days    *int `xml:"Days,omitempty"`
}

type corsRules struct {
	Rules []corsRule `xml:"CorsRule"`
}

type corsRule struct {
	AllowedOrigins  string `xml:"AllowedOrigins"`
	AllowedMethods  string `xml:"AllowedMethods"`
	MaxAgeInSeconds int    `xml:"MaxAgeInSeconds"`
	ExposedHeaders  string `xml:"ExposedHeaders"`
	AllowedHeaders  string `xml:"AllowedHeaders"`
}

func days(n int) *int { return &n }

func yes() *bool { t := true; return &t }

func render(p serviceProperties) []byte {
	GinkgoHelper()
	b, err := xml.Marshal(p)
	Expect(err).NotTo(HaveOccurred())
	return append([]byte(`<?xml version="1.0" encoding="utf-8"?>`), b...)
}

// getProperties reads the service properties.
func getProperties(ctx context.Context, raw driver.RawHTTP) (serviceProperties, answer) {
	GinkgoHelper()
	a := sendXML(ctx, raw, http.MethodGet, propertiesPath, nil, nil, nil)
	Expect(a.status).To(Equal(http.StatusOK), "Get Table Service Properties: %s", a)
	var p serviceProperties
	decodeXML(a, &p)
	return p, a
}

// setProperties sends Set Table Service Properties with body.
func setProperties(ctx context.Context, raw driver.RawHTTP, body []byte) answer {
	GinkgoHelper()
	return sendXML(ctx, raw, http.MethodPut, propertiesPath, body, nil, nil)
}

// withAccountSettings skips the spec where account-wide changes are not allowed, reads the
// current service properties and puts them back when the spec ends. It returns them.
func withAccountSettings(ctx context.Context, f *framework.F) (driver.RawHTTP, serviceProperties) {
	GinkgoHelper()
	skipUnlessAccountChanges(f)
	raw := f.Raw()
	old, a := getProperties(ctx, raw)
	DeferCleanup(func(ctx SpecContext) {
		restored := sendXML(ctx, raw, http.MethodPut, propertiesPath, a.body, nil, nil)
		if restored.status != http.StatusAccepted {
			GinkgoWriter.Printf("could not restore the service properties: %s\n", restored)
		}
	})
	return raw, old
}

// sameCORS compares CORS rules as lists, ignoring blanks around commas.
func sameCORS(got, want []corsRule) bool {
	if len(got) != len(want) {
		return false
	}
	norm := func(s string) string { return strings.ReplaceAll(s, " ", "") }
	for i := range got {
		g, w := got[i], want[i]
		if norm(g.AllowedOrigins) != norm(w.AllowedOrigins) || norm(g.AllowedMethods) != norm(w.AllowedMethods) ||
			norm(g.AllowedHeaders) != norm(w.AllowedHeaders) || norm(g.ExposedHeaders) != norm(w.ExposedHeaders) || g.MaxAgeInSeconds != w.MaxAgeInSeconds {
			return false
		}
	}
	return true
}

// exampleRule is a CORS rule the specs set; its origin is one no browser sends.
var exampleRule = corsRule{AllowedOrigins: "https://conform.example", AllowedMethods: "GET,PUT", MaxAgeInSeconds: 500,
	ExposedHeaders: "x-ms-meta-source*", AllowedHeaders: "x-ms-meta-data*,x-ms-client-request-id"}

var _ = framework.Describe("Table service properties", func(f *framework.F) {
	f.It("service.properties.roundtrip", "answers the logging, metrics and CORS settings that were set", func(ctx context.Context) {
		raw, _ := withAccountSettings(ctx, f)
		want := serviceProperties{
			Logging:       &logging{Version: "1.0", Read: true, Write: true, RetentionPolicy: retention{Enabled: true, Days: days(5)}},
			HourMetrics:   &metrics{Version: "1.0", Enabled: true, IncludeAPIs: yes(), RetentionPolicy: retention{Enabled: true, Days: days(7)}},
			MinuteMetrics: &metrics{Version: "1.0", Enabled: false, RetentionPolicy: retention{Enabled: false}},
			Cors:          &corsRules{Rules: []corsRule{exampleRule}},
		}
		a := setProperties(ctx, raw, render(want))
		Expect(a.status).To(Equal(http.StatusAccepted), "Set Table Service Properties: %s", a)
		got, ga := getProperties(ctx, raw)
		Expect(got.Logging).NotTo(BeNil(), "no Logging: %s", ga)
		Expect(got.Logging.Read && got.Logging.Write && !got.Logging.Delete).To(BeTrue(), "Logging: %s", ga)
		Expect(got.Logging.RetentionPolicy.Days).To(HaveValue(Equal(5)), "Logging retention: %s", ga)
		Expect(got.HourMetrics).NotTo(BeNil(), "no HourMetrics: %s", ga)
		Expect(got.HourMetrics.Enabled).To(BeTrue(), "HourMetrics: %s", ga)
		Expect(got.HourMetrics.RetentionPolicy.Days).To(HaveValue(Equal(7)), "HourMetrics retention: %s", ga)
		Expect(got.MinuteMetrics).NotTo(BeNil(), "no MinuteMetrics: %s", ga)
		Expect(got.MinuteMetrics.Enabled).To(BeFalse(), "MinuteMetrics: %s", ga)
		Expect(got.Cors).NotTo(BeNil(), "no Cors: %s", ga)
		Expect(sameCORS(got.Cors.Rules, want.Cors.Rules)).To(BeTrue(), "CORS rules: %s", ga)
	}, Serial)

	f.It("service.properties.keeps-omitted", "keeps the sections a Set Table Service Properties leaves out", func(ctx context.Context) {
		raw, _ := withAccountSettings(ctx, f)
		first := serviceProperties{
			Logging: &logging{Version: "1.0", Delete: true, RetentionPolicy: retention{Enabled: true, Days: days(3)}},
			Cors:    &corsRules{Rules: []corsRule{exampleRule}},
		}
		a := setProperties(ctx, raw, render(first))
		Expect(a.status).To(Equal(http.StatusAccepted), "Set Table Service Properties with Logging and Cors: %s", a)
		second := serviceProperties{HourMetrics: &metrics{Version: "1.0", Enabled: true, IncludeAPIs: yes(), RetentionPolicy: retention{Enabled: true, Days: days(2)}}}
		a = setProperties(ctx, raw, render(second))
		Expect(a.status).To(Equal(http.StatusAccepted), "Set Table Service Properties with HourMetrics only: %s", a)
		got, ga := getProperties(ctx, raw)
		Expect(got.Logging).NotTo(BeNil(), "no Logging: %s", ga)
		Expect(got.Logging.Delete).To(BeTrue(), "the Logging set before was not kept: %s", ga)
		Expect(got.Logging.RetentionPolicy.Days).To(HaveValue(Equal(3)), "the Logging retention set before was not kept: %s", ga)
		Expect(got.Cors).NotTo(BeNil(), "no Cors: %s", ga)
		Expect(sameCORS(got.Cors.Rules, first.Cors.Rules)).To(BeTrue(), "the CORS rules set before were not kept: %s", ga)
		Expect(got.HourMetrics).NotTo(BeNil(), "no HourMetrics: %s", ga)
		Expect(got.HourMetrics.Enabled).To(BeTrue(), "HourMetrics: %s", ga)
	}, Serial)

	refusedUnchanged := func(ctx context.Context, what string, body func(before serviceProperties) serviceProperties) {
		raw, _ := withAccountSettings(ctx, f)
		base := serviceProperties{Cors: &corsRules{Rules: []corsRule{exampleRule}},
			MinuteMetrics: &metrics{Version: "1.0", Enabled: false, RetentionPolicy: retention{Enabled: false}}}
		a := setProperties(ctx, raw, render(base))
		Expect(a.status).To(Equal(http.StatusAccepted), "Set Table Service Properties: %s", a)
		f.Requires("service.properties.roundtrip", "Get Table Service Properties shows the CORS rule set", func() {
			got, ga := getProperties(ctx, raw)
			Expect(got.Cors).NotTo(BeNil(), "no Cors: %s", ga)
			Expect(sameCORS(got.Cors.Rules, base.Cors.Rules)).To(BeTrue(), "the CORS rules set: %s", ga)
		})
		a = setProperties(ctx, raw, render(body(base)))
		Expect(a.status).To(Equal(http.StatusBadRequest), "Set Table Service Properties with %s: %s", what, a)
		f.Choice("code for "+what, a.outcome())
		got, ga := getProperties(ctx, raw)
		Expect(got.Cors).NotTo(BeNil(), "no Cors: %s", ga)
		Expect(sameCORS(got.Cors.Rules, base.Cors.Rules)).To(BeTrue(), "the refused request changed the CORS rules: %s", ga)
		Expect(got.MinuteMetrics).NotTo(BeNil(), "no MinuteMetrics: %s", ga)
		Expect(got.MinuteMetrics.Enabled).To(BeFalse(), "the refused request changed MinuteMetrics: %s", ga)
	}

	f.It("service.properties.cors-limit", "refuses six CORS rules with 400", func(ctx context.Context) {
		refusedUnchanged(ctx, "six CORS rules", func(serviceProperties) serviceProperties {
			rules := make([]corsRule, 6)
			for i := range rules {
				rules[i] = exampleRule
				rules[i].AllowedOrigins = fmt.Sprintf("https://r%d.conform.example", i)
			}
			return serviceProperties{Cors: &corsRules{Rules: rules}}
		})
	}, Serial)

	f.It("service.properties.retention-limit", "refuses a retention of 366 days with 400", func(ctx context.Context) {
		refusedUnchanged(ctx, "a retention of 366 days", func(serviceProperties) serviceProperties {
			return serviceProperties{
				MinuteMetrics: &metrics{Version: "1.0", Enabled: true, IncludeAPIs: yes(), RetentionPolicy: retention{Enabled: true, Days: days(366)}},
				Cors:          &corsRules{Rules: []corsRule{{AllowedOrigins: "https://other.conform.example", AllowedMethods: "GET", MaxAgeInSeconds: 1}}},
			}
		})
	}, Serial)
})

// serviceStats is the XML of Get Table Service Stats.
type serviceStats struct {
	XMLName        xml.Name `xml:"StorageServiceStats"`
	GeoReplication *struct {
		Status       string `xml:"Status"`
		LastSyncTime string `xml:"LastSyncTime"`
	} `xml:"GeoReplication"`
}

var _ = framework.Describe("Table service stats", func(f *framework.F) {
	f.It("service.stats.secondary", "answers the geo-replication status on the secondary location", func(ctx context.Context) {
		raw := f.Raw()
		a := sendXML(ctx, raw, http.MethodGet, "?restype=service&comp=stats", nil, nil, toSecondary)
		Expect(a.status).To(Equal(http.StatusOK), "Get Table Service Stats on the secondary location: %s", a)
		var st serviceStats
		decodeXML(a, &st)
		Expect(st.GeoReplication).NotTo(BeNil(), "no GeoReplication: %s", a)
		Expect(st.GeoReplication.Status).To(BeElementOf("live", "bootstrap", "unavailable"), "Status: %s", a)
		if st.GeoReplication.LastSyncTime != "" {
			_, err := time.Parse(time.RFC1123, st.GeoReplication.LastSyncTime)
			Expect(err).NotTo(HaveOccurred(), "LastSyncTime is not an RFC 1123 date: %s", a)
		}
	})
})
