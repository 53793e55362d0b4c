# Two commands for a new user: `make demo` and `make test`. Each builds .venv/ on first use.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
ASSIGNMENT ?= 02_decode_scheduling
SUBMISSIONS ?=
OUT ?= build/grades
JOBS ?= 0
export MPLBACKEND := Agg
# The cloud path's bare kernel: older than our pins, as Colab/Kaggle images are (tests/test_cloud.py).
CLOUD_PINS ?= numpy==1.26.4 pandas==2.2.3 matplotlib==3.8.4 ipykernel==6.29.5
CLOUD_BASE ?= $(PYTHON)
CLOUD_VENV := build/cloud-venv/$(notdir $(CLOUD_BASE))_$(subst ==,-,$(subst $(eval) ,_,$(strip $(CLOUD_PINS))))

E2E_STAMP := $(VENV)/.e2e-installed

.PHONY: help venv test e2e chromium e2e-cloud demo bench notebooks release autograde student-bundle clean

help:
	@echo "make demo            worked examples + the instructor pipeline end to end (outputs under build/)"
	@echo "make test            the whole test suite (with the cloud path, make e2e-cloud)"
	@echo "make e2e             a real JupyterLab in Chromium: type the answers, run, save, then make autograde"
	@echo "make bench           timings: schedule() scaling, notebook run, autograde per submission"
	@echo "make notebooks       regenerate notebooks/ and solutions/ from grader/assignments/"
	@echo "make release         regenerate the student editions only"
	@echo "make autograde SUBMISSIONS=dir OUT=dir [ASSIGNMENT=$(ASSIGNMENT)] [JOBS=n]"
	@echo "make e2e-cloud       the cloud path: each notebook alone in a bare kernel with older pandas/matplotlib/numpy"
	@echo "make student-bundle  dist/<course wheel> and build/student-bundle.zip, the student-facing repository"

$(STAMP): requirements.txt requirements.lock pyproject.toml
	@test -n "$(PYTHON)" || { echo "error: python3.11 (or python3) not found on PATH"; exit 1; }
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "error: Python >= 3.10 needed, found " + sys.version.split()[0])'
	@echo ">> creating $(VENV) with $(PYTHON) from pinned requirements (first run only)"
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt -c requirements.lock
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	@touch $(STAMP)

venv: $(STAMP)

test: $(STAMP) $(CLOUD_VENV)/.installed
	CLOUD_PYTHON=$(abspath $(CLOUD_VENV))/bin/python $(PY) -m pytest tests

# Install time: a bare venv with only ipykernel, pandas, matplotlib and numpy, cached per version set.
$(CLOUD_VENV)/.installed:
	@echo ">> creating the cloud-like venv $(CLOUD_VENV) (first run only)"
	$(CLOUD_BASE) -m venv $(CLOUD_VENV)
	$(CLOUD_VENV)/bin/python -m pip install --quiet $(CLOUD_PINS)
	@touch $@

e2e-cloud: $(STAMP) $(CLOUD_VENV)/.installed
	CLOUD_PYTHON=$(abspath $(CLOUD_VENV))/bin/python $(PY) -m pytest tests/test_cloud.py -v

$(E2E_STAMP): $(STAMP) requirements-e2e.txt
	$(PY) -m pip install --quiet -r requirements-e2e.txt
	@touch $(E2E_STAMP)

# Debian's Chromium; Playwright is pointed at it and never downloads a browser of its own.
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  test "$$(id -u)" = 0 || { echo "error: make e2e needs Chromium; install Debian's package: sudo apt-get install chromium"; exit 1; }; \
	  echo ">> installing Debian's chromium for the browser test (first run only)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

e2e: $(E2E_STAMP) chromium
	$(PY) -m pytest e2e -x -q -p no:cacheprovider

demo: $(STAMP)
	$(PY) -m grader.demo

bench: $(STAMP)
	$(PY) -m grader.bench

notebooks: $(STAMP)
	$(PY) -m grader.build all

release: $(STAMP)
	$(PY) -m grader.build release

autograde: $(STAMP)
	@test -n "$(SUBMISSIONS)" || { echo "usage: make autograde SUBMISSIONS=dir OUT=dir [ASSIGNMENT=name]"; exit 2; }
	$(PY) -m grader.autograde --assignment $(ASSIGNMENT) --submissions $(SUBMISSIONS) --out $(OUT) --jobs $(JOBS)

student-bundle: $(STAMP)
	$(PY) -m grader.bundle

clean:
	rm -rf build .pytest_cache .hypothesis
