# hivemem — the two commands of the README are `make demo` and `make test`.
GO ?= go

.PHONY: build demo test test-go fuzz model lint bench clean

build:
	$(GO) build -o bin/hivemem ./cmd/hivemem

demo:
	scripts/demo.sh

# The whole test suite: fetch the model (once) so the embedder tests run on
# the real weights, then every Go test (with throwaway PostgreSQL servers
# started around it when this machine can run them), then a short run of
# each fuzz target.
test: model test-go fuzz

model:
	$(GO) run ./cmd/hivemem model fetch

test-go:
	scripts/pg-test.sh run -- $(GO) test -count=1 -timeout 30m ./...

fuzz:
	scripts/fuzz.sh 200000

STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

lint:
	@test -z "$$(gofmt -l cmd internal tests)" || (gofmt -l cmd internal tests; exit 1)
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

bench:
	$(GO) test -run '^$$' -bench . -benchtime 20x ./internal/...

# demo-home may hold notes of the user's own: clean leaves it.
clean:
	rm -rf bin
	@if [ -d demo-home ]; then echo "kept demo-home (it may hold your own notes): rm -rf demo-home to remove it"; fi
