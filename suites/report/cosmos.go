package report

import (
	"fmt"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver/record"
)

// ProfileCosmos is the expectation profile of Azure Cosmos DB for Table.
const ProfileCosmos = "cosmos"

// judgeCosmos decides, under the cosmos profile, the outcome of one spec of a rule whose
// Cosmos expectation is c, from the outcome the spec had as written (asWritten, judged by
// Storage's answer) and the signature of its failure (nil when it did not fail). It returns
// the outcome and a note saying why. answers are the error answers the spec saw (raw
// exchanges included): Cosmos's refusal must be among them, and a server error never is. It is a pure function; TestJudgeCosmos holds its table.
//
// What the spec did not observe (skipped, interrupted, no answer, not run) and the outcomes a
// baseline decided stay as they are. For CosmosSame the spec is judged as written. For
// CosmosDiffers, Cosmos's recorded answer passes (its refusal status and code, or, for an
// answer that is not a refusal, a failure without an error answer) and Storage's answer (a
// pass as written) or any other answer fails. For CosmosUnsupported, Cosmos's refusal makes
// the rule not applicable and anything else fails. For CosmosUnpromised the rule is not
// applicable unless the backend answered with a server error.
func judgeCosmos(c spec.Cosmos, asWritten Outcome, sig *fixtures.Signature, answers []record.Answer) (Outcome, string) {
	switch asWritten {
	case Pass, Info, Fail, Blocked:
	default:
		return asWritten, ""
	}
	passedAsWritten := asWritten == Pass || asWritten == Info
	var status int
	if sig != nil {
		status = sig.Status
	}
	// recorded: Cosmos's refusal is among the error answers, and no server error is (a
	// 501 that Cosmos is recorded to answer is its refusal, not a server error).
	recorded, serverError := false, false
	see := func(status int, code string) {
		expected := c.Expected(status, code)
		recorded = recorded || expected
		serverError = serverError || status >= 500 && !expected
	}
	if sig != nil && sig.Status != 0 {
		see(sig.Status, sig.Code)
	}
	for _, a := range answers {
		see(a.Status, a.Code)
	}
	recorded = recorded && !serverError
	switch c.KindOrSame() {
	case spec.CosmosDiffers:
		switch {
		case passedAsWritten:
			return Fail, "answered as Storage does where Cosmos DB differs: " + c.Answer
		case len(c.Statuses) > 0 && recorded:
			return Pass, "answered as Cosmos DB is recorded to: " + c.Answer
		case c.Accepts && sig != nil && status == 0 && !serverError:
			return Pass, "answered as Cosmos DB is recorded to: " + c.Answer
		}
		return Fail, fmt.Sprintf("answered neither as Storage nor as Cosmos DB (%s); Cosmos DB: %s", describeSignature(sig), c.Answer)
	case spec.CosmosUnsupported:
		switch {
		case passedAsWritten:
			return Fail, "served a feature Cosmos DB refuses: " + c.Answer
		case recorded:
			return NotApplicable, "not supported on Cosmos DB: " + c.Answer
		}
		return Fail, fmt.Sprintf("refused otherwise than Cosmos DB (%s); Cosmos DB: %s", describeSignature(sig), c.Answer)
	case spec.CosmosUnpromised:
		if serverError {
			return Fail, fmt.Sprintf("server error %s", describeSignature(sig))
		}
		return NotApplicable, "Cosmos DB promises nothing here: " + c.Answer
	}
	return asWritten, ""
}

func describeSignature(sig *fixtures.Signature) string {
	if sig == nil {
		return "no failure"
	}
	return sig.String()
}

// cosmosDifference is what a rule row says about Cosmos DB: its expectation's answer with
// the kind, or nothing where Cosmos answers as Storage does.
func cosmosDifference(r spec.Rule) string {
	if r.Cosmos.KindOrSame() == spec.CosmosSame {
		return r.CosmosDifference
	}
	return r.Cosmos.Summary() + " — " + r.Cosmos.Answer
}
