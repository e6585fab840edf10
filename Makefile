# hivemem — the two commands of the README are `make demo` and `make test`.
GO ?= go

.PHONY: build install demo test test-go fuzz fuzz-long model lint bench clean

build:
	$(GO) build -o bin/hivemem ./cmd/hivemem

# Installs hivemem into $GOBIN (go env GOBIN), else ~/.local/bin, and says
# where, and how to put that directory on PATH when it is not.
install:
	@dir="$$($(GO) env GOBIN)"; dir="$${dir:-$$HOME/.local/bin}"; \
	mkdir -p "$$dir" && $(GO) build -o "$$dir/hivemem" ./cmd/hivemem && \
	echo "installed $$dir/hivemem ($$("$$dir/hivemem" --version))" && \
	case ":$$PATH:" in *":$$dir:"*) ;; *) echo "$$dir is not on your PATH: add it with  export PATH=\"$$dir:\$$PATH\"  (e.g. in ~/.profile)";; esac

demo:
	scripts/demo.sh

# The whole test suite: fetch the model (once) so the embedder tests run on
# the real weights, each fuzz target on its corpus plus a fixed budget, then
# every Go test (with throwaway PostgreSQL servers started around it when
# this machine can run them), ending with the list of skipped tests and why.
test: model fuzz test-go

model:
	$(GO) run ./cmd/hivemem model fetch

# go test's usual lines, then every skipped test with its reason
# (scripts/testsummary runs go test -json and keeps its exit status).
test-go:
	scripts/pg-test.sh run -- $(GO) run ./scripts/testsummary -count=1 -timeout 30m ./...

# Each fuzz target's committed corpus (deterministic: fails the run), then
# 200 000 execs of exploration per target (reported, not failing: Go's
# fuzzer takes no seed). fuzz-long explores 5 000 000 and fails on a find.
fuzz:
	scripts/fuzz.sh 200000

fuzz-long:
	scripts/fuzz.sh --long 5000000

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
