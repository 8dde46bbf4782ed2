# waitroom — run `make help` for the targets.
GO       ?= go
PKGS     ?= ./...
FUZZTIME ?= 5s
BENCHRUNS ?= 5
BENCHTIME ?= 1s
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
# go.mod's toolchain line names the Go release with the standard library's
# security fixes (govulncheck checks it); auto lets go fetch it through the
# module proxy where the installed go is older, whatever go env says.
export GOTOOLCHAIN ?= auto

.PHONY: help build demo deps lint vulncheck test test-race test-redis fuzz bench bench-all chaos docker clean

help: ## show the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

build: ## build bin/waitroom
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" -o bin/waitroom ./cmd/waitroom

demo: ## run the demo: a shop behind a tiny room on http://localhost:8080
	$(GO) run ./cmd/waitroom demo

deps: ## install redis-server, chromium, a JDK, Node.js and openssl (apt) and pebble (go install) when missing
	@.ci/deps

lint: ## gofmt and go vet
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would rewrite:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

vulncheck: ## govulncheck ./... against the Go vulnerability database (built from golang.org/x/vulndb through the module proxy)
	@GO=$(GO) .ci/vulncheck

# govulncheck runs beside the race tests (its output is shown after
# theirs): it needs a CPU for about a minute, and the race tests spend most
# of theirs waiting on the clock. Both exit codes count. It is bounded
# (VULNTIMEOUT: a hung fetch must not hold the run silently) and stopped
# with the run (a background job ignores Ctrl-C).
VULNTIMEOUT ?= 15m
test: deps lint ## everything CI runs: deps, lint, govulncheck, race tests (real Redis, real browser), short fuzzing
	@out=$$(mktemp); vpid=; trap 'kill $$vpid 2>/dev/null; rm -f "$$out"' EXIT; trap 'exit 130' INT TERM; \
	  timeout $(VULNTIMEOUT) $(MAKE) --no-print-directory vulncheck >"$$out" 2>&1 & vpid=$$!; \
	  $(MAKE) --no-print-directory test-race; trc=$$?; \
	  wait $$vpid; vrc=$$?; cat "$$out"; \
	  if [ $$trc -ne 0 ] || [ $$vrc -ne 0 ]; then echo "make test: test-race exit $$trc, vulncheck exit $$vrc" >&2; exit 1; fi
	@$(MAKE) --no-print-directory fuzz

# WAITROOM_REQUIRE_REDIS=1: a missing redis-server fails the tests instead
# of skipping them. -timeout 30m: go test's default of 10 minutes a package
# is less than cmd/waitroom's tests take under the race detector on a busy
# 2-core machine (a newcomer's laptop, a shared CI runner).
TESTTIMEOUT ?= 30m
test-race: ## go test -race ./...
	WAITROOM_REQUIRE_REDIS=1 $(GO) test -race -count=1 -timeout $(TESTTIMEOUT) $(PKGS)

test-redis: ## only the tests that need Redis
	WAITROOM_REQUIRE_REDIS=1 $(GO) test -race -count=1 -timeout $(TESTTIMEOUT) ./waitroom/redisstore/... ./cmd/...

fuzz: ## run each fuzz test for FUZZTIME (default 5s)
	GO=$(GO) .ci/fuzz-one ./waitroom/ FuzzTicketDecode $(FUZZTIME)
	GO=$(GO) .ci/fuzz-one ./waitroom/ FuzzTicketDeserialize $(FUZZTIME)
	GO=$(GO) .ci/fuzz-one ./waitroom/ FuzzParseRate $(FUZZTIME)
	GO=$(GO) .ci/fuzz-one ./waitroom/challenge/ FuzzCheck $(FUZZTIME)
	GO=$(GO) .ci/fuzz-one ./waitroom/pass/ FuzzVerify $(FUZZTIME)
	GO=$(GO) .ci/fuzz-one ./proxy/ FuzzRouteMatch $(FUZZTIME)
	GO=$(GO) .ci/fuzz-one ./proxy/ FuzzCleanPath $(FUZZTIME)
	GO=$(GO) .ci/fuzz-one ./proxy/ FuzzClientAddr $(FUZZTIME)
	GO=$(GO) .ci/fuzz-one ./web/ FuzzFastPage $(FUZZTIME)
	GO=$(GO) .ci/fuzz-one ./proxy/ FuzzHeaderKind $(FUZZTIME)
	GO=$(GO) .ci/fuzz-one ./waitroom/pattern/ FuzzPattern $(FUZZTIME)

# Each run of BenchmarkPath (saturation) and BenchmarkLatency (a steady
# rate) puts bare proxy and gateway side by side, so the runs alternate;
# benchratio prints the median ratios. The output is
# kept in bench.out.
bench: ## gateway vs bare ReverseProxy, BENCHRUNS alternating runs, ratios (gateway / bare)
	@for i in $$(seq $(BENCHRUNS)); do \
	  $(GO) test -run='^$$' -bench='^Benchmark(Path|Latency)$$' -benchtime=$(BENCHTIME) ./cmd/waitroom/ || exit 1; \
	done | tee bench.out | grep -E '^Benchmark' ; \
	$(GO) run ./cmd/benchratio < bench.out

# The failover chaos runs of issue 22 (cmd/waitroom-chaos): three gateways
# sharing a Sentinel group, a Cluster with replicas or one Redis, a line of
# hundreds, each fault CHAOSRUNS times (23 to 26 s a run: 20 runs of the
# five faults take ~40 minutes). The table goes to standard output, each
# run's line to standard error; the exit status is 1 when an invariant broke.
CHAOSRUNS ?= 20
chaos: ## failover chaos: CHAOSRUNS runs (default 20) of each fault, a Markdown table of what held
	@$(GO) run ./cmd/waitroom-chaos -runs $(CHAOSRUNS)

bench-all: ## every benchmark, with allocations
	$(GO) test -run='^$$' -bench=. -benchmem $(PKGS)

docker: ## build the container image
	docker build -t waitroom:$(VERSION) .

clean: ## remove build output
	rm -rf bin bench.out
