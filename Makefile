# The test command the README gives; .ci/run runs it and nothing else.
GO ?= go
# Fuzz budgets are counts of executions, not durations: a duration (-fuzztime 10s) races Go's
# fuzz coordinator at the deadline and fails with a bare "context deadline exceeded" and no
# crasher (golang/go#75804, fixed only in Go 1.27). A count has no deadline to race.
FUZZ_PARSE ?= 100000x
FUZZ_REST ?= 20000x
FUZZ_MINIMIZE ?= 500x

.PHONY: test deps unit fuzz bench image

test: deps unit fuzz

# Everything the tests drive (PostgreSQL, Docker, busybox, Chromium, the npm packages, the Go
# modules), installed with apt (sudo when not root) and started; quick when all is present.
deps:
	GO=$(GO) scripts/setup

unit:
	$(GO) vet ./...
	$(GO) build -tags noserver -o /dev/null ./cmd/chaos
	$(GO) test -count=1 -timeout 25m ./...

fuzz:
	$(GO) test ./spec -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZ_PARSE) -fuzzminimizetime $(FUZZ_MINIMIZE)
	$(GO) test ./proxies -run '^$$' -fuzz '^FuzzRESTBody$$' -fuzztime $(FUZZ_REST) -fuzzminimizetime $(FUZZ_MINIMIZE)

bench:
	$(GO) test ./proxies -run '^$$' -bench . -benchtime 2000x

# The chaos-worker image of docker-compose.yml: FROM scratch with a static chaos binary
# (docs/deploy.md).
image:
	deploy/build-rootfs.sh deploy/rootfs
	docker build -t chaos-worker -f deploy/Dockerfile deploy
