# Two commands: `make run` (set up, ingest the sample corpus, evaluate, promote, serve)
# and `make test` (set up, run the whole suite). Everything installs into .venv.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
RAG := $(VENV)/bin/rag
HOST ?= 127.0.0.1
PORT ?= 8080
# torch is pinned to the CPU build: an unpinned torch pulls a multi-GB CUDA build.
TORCH_SPEC ?= torch==2.13.0

.PHONY: setup run ingest test bench clean browser

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "$(TORCH_SPEC)"
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

# Each ingest builds a new version only when a document changed (a served version is
# never written), then the gate evaluates it and promotes it only if every gate passes.
# Eval and promotion print their figures; per-query logs stay quiet there.
run: setup
	RAG_LOGGING__LEVEL=WARNING $(RAG) ingest --manifest manifests/sample.jsonl --profile sample --update-alias
	RAG_LOGGING__LEVEL=WARNING $(RAG) ingest --manifest manifests/handbook.jsonl --domain-key handbook --update-alias
	$(RAG) alias status
	@echo
	@echo "Ready. Open http://$(HOST):$(PORT)/ in a browser for the chat page, or in another terminal:"
	@echo "  curl -s -X POST http://$(HOST):$(PORT)/chat -H 'Content-Type: application/json' -d '{\"question\": \"How many days of annual leave do employees get?\"}'"
	@echo "  curl -s -X POST http://$(HOST):$(PORT)/chat -H 'Content-Type: application/json' -H 'X-RAG-Domain: handbook' -d '{\"question\": \"Which safety shoes are part of the field engineer PPE kit?\"}'"
	@echo
	$(RAG) serve --host $(HOST) --port $(PORT)

# The browser tests (tests/api/test_web_ui.py) drive Debian's chromium with Playwright's own
# driver; no browser is downloaded by Playwright. Root installs it directly, others through sudo.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
browser:
	@command -v chromium >/dev/null 2>&1 || { echo "Installing Debian's chromium for the browser tests..."; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq chromium >/dev/null; } || \
	  { echo "error: chromium could not be installed; the browser tests need it (apt-get install chromium)" >&2; exit 1; }

test: setup browser
	$(PY) -m pytest -q

bench: setup
	$(RAG) bench

clean:
	rm -rf $(VENV) data/rag.sqlite* data/rag-assets data/eval-reports data/onnx-cache .pytest_cache
