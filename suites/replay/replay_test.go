package replay_test

import (
	"context"
	"encoding/base64"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/tableserver"
	"github.com/tableconform/conform/suites/replay"
	"github.com/tableconform/conform/suites/verdict"
)

// referenceTarget serves a fresh reference over loopback HTTP as the development account.
func referenceTarget(t *testing.T) replay.Target {
	t.Helper()
	srv := httptest.NewServer(tableserver.New(reference.New()))
	t.Cleanup(srv.Close)
	key, err := base64.StdEncoding.DecodeString(tableserver.DevAccountKey)
	if err != nil {
		t.Fatal(err)
	}
	return replay.Target{Name: "reference", Endpoint: srv.URL + "/" + tableserver.DevAccountName, Account: tableserver.DevAccountName, Key: key}
}

func corpus(t *testing.T) []replay.Source {
	t.Helper()
	srcs, err := replay.CollectFS(fixtures.Recordings(), "fixtures/recordings")
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) < 10 {
		t.Fatalf("the corpus has %d recordings", len(srcs))
	}
	return srcs
}

// knownDisagreements are the corpus exchanges the reference answers differently from the
// recorded service, each with its cause (docs/EVIDENCE.md 13, E-replay-corpus). A
// disagreement not listed fails the test; a listed one that now agrees is logged, so that
// the list is trimmed when the reference catches up.
var knownDisagreements = map[string]string{}

// TestCorpusAgainstReference replays the recorded real traffic against the reference: every
// replayable exchange must agree, or be a known disagreement with its cause.
func TestCorpusAgainstReference(t *testing.T) {
	r := &replay.Replayer{Target: referenceTarget(t), TablePrefix: "cftest0000"}
	rep := r.Run(context.Background(), corpus(t), nil)
	seen := map[string]bool{}
	for _, rec := range rep.Recordings {
		for _, x := range rec.Exchanges {
			if x.Outcome != replay.OutcomeDisagree {
				continue
			}
			key := filepath.Base(rec.File) + "#" + strconv.Itoa(x.Index)
			seen[key] = true
			if _, ok := knownDisagreements[key]; !ok {
				t.Errorf("%s %s %s: %s\n  recorded %+v\n  live     %+v", key, x.Method, x.Path, strings.Join(x.Differences, "; "), x.Recorded, x.Live)
			}
		}
	}
	for key, cause := range knownDisagreements {
		if !seen[key] {
			t.Logf("%s now agrees (listed as: %s); remove it from knownDisagreements", key, cause)
		}
	}
	if len(rep.Unreadable) > 0 {
		t.Errorf("unreadable corpus files: %v", rep.Unreadable)
	}
	if rep.Totals.Agree < 30 {
		t.Errorf("only %d exchanges agree", rep.Totals.Agree)
	}
	t.Log(rep.Totals.Sentence())
}

// TestCosmosProfile replays only the Cosmos recordings of the corpus.
func TestCosmosProfile(t *testing.T) {
	r := &replay.Replayer{Target: referenceTarget(t), Profile: replay.ProfileCosmos, TablePrefix: "cftest0000"}
	rep := r.Run(context.Background(), corpus(t), nil)
	replayed := 0
	for _, rec := range rep.Recordings {
		cosmos := strings.Contains(rec.File, "cosmos")
		if cosmos != (rec.Skipped == "") {
			t.Errorf("%s: skipped %q under --profile cosmos", rec.File, rec.Skipped)
		}
		if rec.Skipped == "" {
			replayed++
		}
	}
	if replayed < 2 {
		t.Errorf("%d Cosmos recordings replayed", replayed)
	}
	t.Log(rep.Totals.Sentence())
}

// referenceCosmosTarget serves the Cosmos flavour of the reference (with Cosmos's property
// limits) over loopback HTTP as the development account.
func referenceCosmosTarget(t *testing.T) replay.Target {
	t.Helper()
	model := reference.New(reference.CosmosOptions()...)
	srv := httptest.NewServer(tableserver.NewCosmos(tableserver.New(model)))
	t.Cleanup(srv.Close)
	key, err := base64.StdEncoding.DecodeString(tableserver.DevAccountKey)
	if err != nil {
		t.Fatal(err)
	}
	return replay.Target{Name: "reference-cosmos", Endpoint: srv.URL + "/" + tableserver.DevAccountName, Account: tableserver.DevAccountName, Key: key}
}

// TestCosmosCorpusAgainstReferenceCosmos replays the corpus's Cosmos DB recordings against
// the Cosmos flavour of the reference: every exchange must agree, compared strictly (entity
// order, error messages' first lines; only table listings compared as sets), and against
// the Storage-flavoured reference the recordings show Cosmos's differences.
func TestCosmosCorpusAgainstReferenceCosmos(t *testing.T) {
	r := &replay.Replayer{Target: referenceCosmosTarget(t), Profile: replay.ProfileCosmos, TablePrefix: "cftest0000", Strict: true}
	rep := r.Run(context.Background(), corpus(t), nil)
	for _, rec := range rep.Recordings {
		for _, x := range rec.Exchanges {
			if x.Outcome == replay.OutcomeDisagree {
				t.Errorf("%s #%d %s %s: %s\n  recorded %+v\n  live     %+v", filepath.Base(rec.File), x.Index, x.Method, x.Path, strings.Join(x.Differences, "; "), x.Recorded, x.Live)
			}
		}
	}
	if rep.Totals.Agree < 15 || rep.Totals.Skipped > 0 {
		t.Errorf("%s", rep.Totals.Sentence())
	}
	storage := &replay.Replayer{Target: referenceTarget(t), Profile: replay.ProfileCosmos, TablePrefix: "cftest0000"}
	if s := storage.Run(context.Background(), corpus(t), nil); s.Totals.Disagree < 5 {
		t.Errorf("the Storage-flavoured reference disagrees with only %d Cosmos exchanges: %s", s.Totals.Disagree, s.Totals.Sentence())
	}
	t.Log(rep.Totals.Sentence())
}

// Issue 20, item 4: a replay against a backend that stops answering stops early, says so
// in its totals, and (verdict.ReplayExit) never exits 0.
func TestStopsEarlyVisibly(t *testing.T) {
	srv := httptest.NewServer(nil)
	target := replay.Target{Name: "gone", Endpoint: srv.URL + "/" + tableserver.DevAccountName, Account: tableserver.DevAccountName, Key: []byte("key")}
	srv.Close() // nothing answers any more
	r := &replay.Replayer{Target: target, TablePrefix: "cftest0000"}
	rep := r.Run(context.Background(), corpus(t), nil)
	if rep.Totals.Stopped == "" || !strings.Contains(rep.Totals.Sentence(), "stopped before") {
		t.Fatalf("the replay did not say it stopped: %s", rep.Totals.Sentence())
	}
	if code := verdict.ReplayExit(verdict.Replay{Agree: rep.Totals.Agree, Disagree: rep.Totals.Disagree, Stopped: rep.Totals.Stopped}); code == verdict.ExitOK {
		t.Fatalf("a replay that stopped early exits %d", code)
	}
}
