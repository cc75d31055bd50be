package all_test

import (
	"testing"

	"github.com/tableconform/conform/suites/all"
	"github.com/tableconform/conform/suites/framework"
)

// TestConformance runs the whole suite against CONFORM_BACKENDS (default "reference").
func TestConformance(t *testing.T) {
	framework.RunSuite(t, "conform", framework.ConfigFromEnv(all.Open))
}
