# conform: the two commands a newcomer needs are `make report` (the main job) and
# `make test` (the quick tests, minutes); `make test-all` is everything CI runs. All install
# what they need: Go modules through the module proxy, Azurite from the npm lock file. None
# installs system packages: Chromium for the browser test comes from `make browser` (or CI's
# scripts/ci-deps.sh).

GO            ?= go

# testcontainers-go (azurite-docker) reaches the published ports of a local engine on
# loopback, never through a gateway address it would guess inside a container, and starts no
# reaper (its image cannot be pulled here). A caller's own values win.
export TESTCONTAINERS_HOST_OVERRIDE ?= 127.0.0.1
export TESTCONTAINERS_RYUK_DISABLED ?= true
BACKENDS      ?= reference,model,reference-http,azurite
TEST_TIMEOUT  ?= 40m
FUZZTIME      ?= 10s
BENCH_BACKENDS ?= reference,reference-http,azurite
MUTATION_SAMPLE ?= 0
MUTATION_SEED  ?= 1
# make test-all runs the whole-catalogue mutation test on a share of the mutants: MUTANT_SHARE
# of them, chosen by MUTANT_SEED (the day, so the share rotates; make mutation-matrix runs all).
MUTANT_SHARE  ?= 20
# The mutation step of test-all: the share (test-mutants), or the whole matrix
# (mutation-matrix, as CI runs it).
MUTANT_STEP   ?= test-mutants
MUTANT_SEED   ?= $(shell date -u +%F)
# staticcheck must read the Go version go.mod names (0.8.2 reads Go 1.26).
STATICCHECK_VERSION ?= v0.8.2
# deadcode (golang.org/x/tools) lists functions that no program or test of the module reaches.
DEADCODE_VERSION ?= v0.52.0
# gotestsum prints a line per package and the closing summary of make test and test-all;
# internal/testprogress, between it and go test, adds a line whenever 20 s pass without
# one, each skip in one line, and the conformance runs' counts per backend.
GOTESTSUM_VERSION ?= v1.13.0
PROGRESS      = $(GO) run ./internal/testprogress
# What runs before the progress filter exists (compiling it) says it is still at work every
# 20 s (scripts/heartbeat.sh, plain shell).
HEARTBEAT     = ./scripts/heartbeat.sh
GOTEST        = $(GO) run gotest.tools/gotestsum@$(GOTESTSUM_VERSION) --format standard-quiet --hide-summary skipped \
                --raw-command -- $(PROGRESS) $(GO) test -json
# Stamped into the binaries by make build, dist and image (conform version prints them).
VERSION       ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT        ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
BUILDINFO     := github.com/tableconform/conform/internal/buildinfo
LDFLAGS       := -s -w -X $(BUILDINFO).version=$(VERSION) -X $(BUILDINFO).commit=$(COMMIT)
IMAGE         ?= conform:local
# The version install-check serves HEAD as.
INSTALL_CHECK_VERSION ?= v0.1.0

.PHONY: all tools report test test-all test-packages-short test-packages test-soak test-explore test-mutants mutation-matrix deps browser build install-check dist image image-test azurite-image lint vet bench fuzz serve clean browser-report mutation

all: test

# tools: compiles what make test and test-all run the tests through, each step saying what
# it compiles and a line at least every 30 s (issue 34, item 1: on a fresh clone the first
# progress line came after 49 s of silence, while gotestsum and the progress filter were
# compiled by `go run`). Both compile under a shell heartbeat (a line every 20 s, whatever
# else is said); `go run` then finds them in Go's build cache. Quick when they are there.
tools:
	@echo "make: compiling the test tools unless Go's build cache has them: the progress filter (internal/testprogress), then gotestsum $(GOTESTSUM_VERSION) (a minute or more on a fresh clone)"
	@$(HEARTBEAT) "compiling the progress filter (internal/testprogress)" $(GO) build -o /dev/null ./internal/testprogress
	@$(HEARTBEAT) "downloading and compiling gotestsum $(GOTESTSUM_VERSION)" $(GO) run gotest.tools/gotestsum@$(GOTESTSUM_VERSION) --version >/dev/null

# Builds bin/conform (which downloads the Go modules), then installs the pinned npm packages
# (Azurite, the JavaScript SDK) with it, through the same installer the tests use
# (`conform setup`), which skips an install that matches the committed lock file; idempotent.
deps: build
	@echo "make: installing the pinned npm packages (Azurite, the JavaScript SDK) unless the lock file's are there"
	@$(PROGRESS) -plain "installing the npm packages" ./bin/conform setup

# Chromium for the browser test of report.html: installs Debian's chromium with apt-get when
# missing (root only; says so, and says truthfully whether it worked). The test skips
# without it.
browser:
	./scripts/ensure-chromium.sh

## build: bin/conform, static, stamped with VERSION and COMMIT.
build:
	@echo "make: building bin/conform (on a fresh clone the Go modules are downloaded and compiled first: a minute or more)"
	@CGO_ENABLED=0 $(PROGRESS) -plain "building bin/conform" $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/conform ./cmd/conform

## install-check: `go install .../cmd/conform@INSTALL_CHECK_VERSION` from a scratch module,
## offline, with the committed HEAD served by a file-based module proxy.
install-check:
	GO=$(GO) ./scripts/install-check.sh $(INSTALL_CHECK_VERSION)

## dist: archives for linux, darwin and windows on amd64 and arm64, and SHA256SUMS, in dist/.
dist:
	GO=$(GO) VERSION=$(VERSION) LDFLAGS='$(LDFLAGS)' ./scripts/dist.sh

## image: the container image IMAGE (FROM scratch: the static binary, CA certificates).
image: build
	./scripts/image.sh $(IMAGE)

## image-test: `conform run --backend me=...` in the image, against `conform serve` on the host.
image-test: image
	./scripts/image-test.sh $(IMAGE)

## azurite-image: the local image azurite-docker uses, built without a registry (needs an engine).
azurite-image:
	./scripts/azurite-image.sh

## browser-report: the browser test of report.html on a real run of the reference, Azurite
## and a deliberately wrong backend (several minutes); keeps a screenshot beside the report.
## (The run exits 1: the wrong backend fails, as it should.)
browser-report: deps browser
	-bin/conform run --backend reference --backend azurite --backend mutant:batch-not-atomic --out conform-report-browser
	CONFORM_BROWSER_REPORT=$(CURDIR)/conform-report-browser CONFORM_SCREENSHOT=$(CURDIR)/conform-report-browser/report.png \
		$(GO) test -count=1 -run TestHTMLInBrowser -v ./suites/report

## report: the main job: run the suites against the embedded default (the reference and,
## where it can be started, Azurite) and write conform-report/ (report.md, report.html,
## report.json, junit.xml).
report: deps
	@echo "make: running the suites (the reference, and Azurite where it starts); progress follows"
	./bin/conform run --out conform-report

## matrix: the compatibility matrix: the suite against the reference, reference-cosmos and
## the Azurite versions MATRIX_AZURITE_VERSIONS (from npm, into conform's cache; empty: the
## span scripts/matrix.sh names, eleven from 3.14.0 to 3.35.0), two at a time, each run
## published, then conform-matrix/matrix.html (and .md, .json) compares them rule by rule and
## says where a version changed a rule's outcome.
MATRIX_AZURITE_VERSIONS ?=
.PHONY: matrix
matrix: build
	MATRIX_AZURITE_VERSIONS='$(MATRIX_AZURITE_VERSIONS)' ./scripts/matrix.sh

# steps runs the make targets $(2) in order, each in a make of its own, stops at the first
# that fails, and says last, in one line, whether all passed or which failed, exiting with
# that target's status: "$(1): passed", "$(1): FAILED (vet)".
steps = for step in $(2); do \
	  $(MAKE) --no-print-directory $$step || { status=$$?; echo "$(1): FAILED ($$step)"; exit $$status; }; \
	done; echo "$(1): passed"

## test: vet, then every package's tests with -race and -short, with the conformance suite
## against the reference in process, the reference over HTTP and Azurite; then the soak of
## `conform serve --data` under faults (about half a minute), which prints its counts.
## -short leaves out the tests that take minutes each (each skip is said in one line): the
## suite through reverse proxies, against a secret-watching server and a backend that hangs
## after its probe, the mutation test, Azurite started by the provision and SDK driver
## tests, long randomised runs. A spec that fails once against Azurite is run once more
## (never against the reference), and every spec that passed only when retried is listed
## before the closing summary. Nothing is taken from Go's test cache: a backend outside the
## process (Azurite from npm or Docker) can change without any file the cache watches
## changing. The last line says "make test: passed" or which step failed.
test:
	@$(call steps,make test,tools deps vet test-packages-short test-soak)

## test-all: what CI runs: every test without -short, with -race, and the soak; then the
## mutation test (the whole catalogue against deliberately wrong backends, one process
## each) on a rotating share of MUTANT_SHARE mutants, without the race detector: it re-runs
## the suite's own specs, which the first step ran with it. CI runs the whole matrix in its
## place (MUTANT_STEP=mutation-matrix). The last line says "make test-all: passed" or which
## step failed.
test-all:
	@$(call steps,make test-all,tools deps vet test-packages test-soak test-explore $(MUTANT_STEP))

# The steps of test and test-all.
test-packages-short:
	@echo "make: go test -short -race ./... (a line per package, and one at least every 30 s)"
	@log=$$(mktemp) && \
	CONFORM_RETRY_LOG=$$log CONFORM_BACKENDS=$(BACKENDS) CONFORM_MUTANTS=0 $(GOTEST) -short -race -count=1 -timeout $(TEST_TIMEOUT) ./...; \
	status=$$?; rm -f $$log; exit $$status

test-packages:
	@echo "make: go test -race ./... (a line per package, and one at least every 30 s)"
	@log=$$(mktemp) && \
	CONFORM_RETRY_LOG=$$log CONFORM_BACKENDS=$(BACKENDS) CONFORM_MUTANTS=0 $(GOTEST) -race -count=1 -timeout $(TEST_TIMEOUT) ./...; \
	status=$$?; rm -f $$log; exit $$status

test-soak:
	@echo "make: the soak of conform serve --data under faults"
	CONFORM_SOAK=1 $(PROGRESS) -plain "soaking conform serve --data" $(GO) test -race -count=1 -timeout 5m -run 'TestServeSoak$$' -v ./cmd/conform

test-explore: tools
	@echo "make: conform explore against every mutant whose fault lies in what it draws (3000 operations each)"
	CONFORM_EXPLORE_MUTANTS=all $(GOTEST) -count=1 -timeout $(TEST_TIMEOUT) -run 'TestExploreFindsEveryReachableMutant' ./explore

test-mutants: tools
	@echo "make: the mutation test on $(MUTANT_SHARE) mutants chosen by $(MUTANT_SEED) (the whole catalogue against each)"
	CONFORM_MUTANTS_SAMPLE=$(MUTANT_SHARE) CONFORM_MUTANTS_SEED=$(MUTANT_SEED) $(GOTEST) -count=1 -timeout $(TEST_TIMEOUT) \
		-run 'TestMutants|TestCatalogueCoverage' ./suites/all

## mutation-matrix: the whole-catalogue mutation matrix: every mutant against the whole
## catalogue, one process each, two at a time (8 minutes on two quiet cores); the
## failing rules of each must be exactly the ones it declares, and docs/MUTANTS.md must
## state this run's result (rewrite it with `go test ./suites/all -run TestMutants -update`).
## Then the race rules a hundred times against the mutant that races without a lock (about
## 2 minutes): each must catch it in 99 of the 100 runs.
mutation-matrix: tools
	@echo "make: the mutation matrix (every mutant against the whole catalogue), then the race rules a hundred times"
	CONFORM_MUTANTS=1 $(GOTEST) -count=1 -timeout $(TEST_TIMEOUT) \
		-run 'TestMutants|TestCatalogueCoverage|TestRaceRulesCatchUnlockedReadModifyWrite' ./suites/all

vet:
	@echo "make: go vet ./..."
	@$(PROGRESS) -plain "vetting" $(GO) vet ./...

## lint: vet, gofmt, staticcheck (staticcheck.conf), the GitHub workflow files with the
## reusable action they use, and no unreachable function (deadcode -test); staticcheck,
## actionlint and deadcode come from the module proxy; actionlint reads action.yml through
## `uses: ./`.
lint: vet
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...
	$(GO) run github.com/rhysd/actionlint/cmd/actionlint@v1.7.7 .github/workflows/*.yml
	@out="$$($(GO) run golang.org/x/tools/cmd/deadcode@$(DEADCODE_VERSION) -test ./...)" || exit 1; \
	  test -z "$$out" || { echo "unreachable functions (remove them, or use them):"; echo "$$out"; exit 1; }

## mutation: the unbiased measure of the suite's power (not part of `make test`): mutate the
## reference's source with standard operators and run the suite against each mutant, one at
## a time; writes mutation-report/. All mutants take hours on two cores; sample with
## `make mutation MUTATION_SAMPLE=15 MUTATION_SEED=1`.
mutation:
	$(GO) run ./cmd/mutation --sample $(MUTATION_SAMPLE) --seed $(MUTATION_SEED) --out mutation-report

## bench: the default benchmark set (28 cases, 6 runs each, and the growth family at 10^3 and
## 10^4 entities; BENCH_GROWTH_SIZES for more) against each of BENCH_BACKENDS,
## compared with benchstat, then the SDK ceiling: 6 to 8 minutes here, a line at least every
## 30 s, the full output in bench/results/<time>/. BENCH_WORKLOADS=all runs the 40 cases
## (11 minutes); scripts/bench.sh names the other variables.
bench: deps
	./scripts/bench.sh $(BENCH_BACKENDS)

## fuzz: every fuzz target for FUZZTIME each.
fuzz:
	./scripts/fuzz.sh $(FUZZTIME)

## serve: the reference over the Table REST protocol on 127.0.0.1:10002.
serve: build
	./bin/conform serve --addr 127.0.0.1:10002

clean:
	rm -rf conform-report conform-report-merged bench/results bin dist conform-report-browser mutation-report
