# The test command the README gives; .ci/run calls it after installing what it needs.
GO ?= go
FUZZTIME ?= 10s

.PHONY: test unit fuzz bench js

test: js unit fuzz

js: tests/js/node_modules/.installed

tests/js/node_modules/.installed: tests/js/package.json tests/js/package-lock.json
	npm ci --prefix tests/js --no-audit --no-fund
	touch $@

unit:
	$(GO) vet ./...
	$(GO) test -count=1 ./...

fuzz:
	$(GO) test ./spec -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME)
	$(GO) test ./proxies -run '^$$' -fuzz '^FuzzRESTBody$$' -fuzztime $(FUZZTIME)

bench:
	$(GO) test ./proxies -run '^$$' -bench . -benchtime 2000x
