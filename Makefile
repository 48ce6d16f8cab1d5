# `make demo`: install, ingest the sample corpus, research one question on the embedded models.
# `make test`: install and run the test suite (includes one run of the embedded chat model).
# `make docs`: build the docs site into site/ (MkDocs, --strict: a broken link fails).
# `make lock`: refresh constraints.txt, the tested versions `make install` installs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DEMO_DATA := .deepsift-demo
QUESTION := Why was the Kestrel Works treatment plant built, how much did it cost in the end compared with its approved budget, and did it reduce phosphorus levels in Lake Veldmere?

.PHONY: install lock demo test docs lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Phony, so pip runs every time and picks up any change to pyproject.toml or constraints.txt.
install: $(BIN)/python
	$(BIN)/pip install --quiet -c constraints.txt -e '.[local,eval,dev,e5,serve,mcp,ray,docs]'

# A throwaway venv, the newest versions of everything (no constraints), frozen into constraints.txt.
lock:
	@set -eu; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	echo "lock: fresh venv in $$tmp, newest versions of .[local,eval,dev,e5,serve,mcp,ray,docs]"; \
	$(PYTHON) -m venv "$$tmp/venv"; \
	"$$tmp/venv/bin/pip" install --quiet --upgrade pip; \
	"$$tmp/venv/bin/pip" install --quiet -e '.[local,eval,dev,e5,serve,mcp,ray,docs]'; \
	{ \
	echo "# The tested versions of every package deepsift[local,eval,dev,e5,serve,mcp,ray,docs] installs (not deepsift)."; \
	echo "# Made by \`make lock\`: a fresh venv ($$("$$tmp/venv/bin/python" --version), $$(uname -sm)),"; \
	echo "# pip install -e '.[local,eval,dev,e5,serve,mcp,ray,docs]' with no constraints, then pip freeze --exclude-editable."; \
	echo "# Used by \`make install\`; by hand: pip install -c constraints.txt -e '.[local,eval,dev,e5,serve,mcp,ray,docs]'."; \
	echo "# Refresh: make lock, then make test, and commit this file."; \
	"$$tmp/venv/bin/pip" freeze --exclude-editable; \
	} > "$$tmp/constraints.txt"; \
	if grep -v '^#' "$$tmp/constraints.txt" | grep -iE '^(deepsift|torch)\b|file:|^-e |^[./]'; then \
		echo "lock: refusing the lines above (deepsift itself, a local path, or torch)" >&2; exit 1; \
	fi; \
	mv "$$tmp/constraints.txt" constraints.txt; \
	echo "lock: wrote constraints.txt ($$(grep -vc '^#' constraints.txt) packages)"

demo: install
	DEEPSIFT_DATA_DIR=$(DEMO_DATA) $(BIN)/deepsift ingest examples/corpus/science --collection science \
		--description "Science and monitoring of Lake Veldmere: water-quality data, the Kestrel Works plant design, buffer-strip trials, sediment studies, the monitoring network and its staff"
	DEEPSIFT_DATA_DIR=$(DEMO_DATA) $(BIN)/deepsift ingest examples/corpus/operations --collection operations \
		--description "Operations of the Lake Veldmere Water Authority: board minutes and budgets, contracts and costs, incident reports, press releases"
	DEEPSIFT_DATA_DIR=$(DEMO_DATA) $(BIN)/deepsift research "$(QUESTION)" --max-iterations 2 -o report.md
	@echo ""
	@echo "The report is in report.md. Go on with the demo's collections:"
	@echo "  source $(BIN)/activate                   # deepsift on your PATH"
	@echo "  export DEEPSIFT_DATA_DIR=$(CURDIR)/$(DEMO_DATA)"
	@echo "  deepsift runs                               # the run above and its thread id"
	@echo "  deepsift ask THREAD_ID \"What did Kestrel Works cost in the end?\""
	@echo "  deepsift serve                              # the web app; the CLI works beside it"
	@echo "or with your own folder: deepsift ingest PATH --collection NAME --description \"...\""

test: install
	$(BIN)/python -m pytest -q

# The settings page is written from the settings class first, so the site shows them as they are.
docs: $(BIN)/python
	$(BIN)/pip install --quiet -c constraints.txt -e '.[docs]'
	$(BIN)/python docs/settings_page.py
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

lint: install
	$(BIN)/ruff check deepsift tests benchmarks
	$(BIN)/ruff format --check deepsift tests benchmarks

clean:
	rm -rf $(VENV) $(DEMO_DATA) report.md site
