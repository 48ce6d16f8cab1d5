# `make demo`: install, ingest the sample corpus, research one question on the embedded models.
# `make test`: install and run the test suite (includes one run of the embedded chat model).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DEMO_DATA := .deepsift-demo
QUESTION := Why was the Kestrel Works treatment plant built, how much did it cost in the end compared with its approved budget, and did it reduce phosphorus levels in Lake Veldmere?

.PHONY: install demo test lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

install: $(BIN)/python
	$(BIN)/pip install --quiet -e '.[local,eval,dev]'

demo: install
	DEEPSIFT_DATA_DIR=$(DEMO_DATA) $(BIN)/deepsift ingest examples/corpus/science --collection science \
		--description "Science and monitoring of Lake Veldmere: water-quality data, the Kestrel Works plant design, buffer-strip trials, sediment studies, the monitoring network and its staff"
	DEEPSIFT_DATA_DIR=$(DEMO_DATA) $(BIN)/deepsift ingest examples/corpus/operations --collection operations \
		--description "Operations of the Lake Veldmere Water Authority: board minutes and budgets, contracts and costs, incident reports, press releases"
	DEEPSIFT_DATA_DIR=$(DEMO_DATA) $(BIN)/deepsift research "$(QUESTION)" --max-iterations 2 -o report.md

test: install
	$(BIN)/python -m pytest -q

lint: install
	$(BIN)/ruff check deepsift tests benchmarks
	$(BIN)/ruff format --check deepsift tests benchmarks

clean:
	rm -rf $(VENV) $(DEMO_DATA) report.md
