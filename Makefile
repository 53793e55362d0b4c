# Two commands for a new user: `make demo` and `make test`. Each builds .venv/ on first use.
# make venv's Python: the instructor's lock resolves on each of these (make check-pins; grader/pins.py says the same).
INSTRUCTOR_PYTHONS := 3.11 3.12 3.13
PYTHON ?= $(shell command -v python3.11 || command -v python3.12 || command -v python3.13 || command -v python3)
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
ASSIGNMENT ?= 02_decode_scheduling
SUBMISSIONS ?=
OUT ?= build/grades
JOBS ?= 0
SHARD ?=
SANDBOX ?=
TIMES ?=
EXTENSIONS ?=
export MPLBACKEND := Agg
# The student Pythons: requirements-student.txt and the lab wheel resolve on each (make check-pins).
STUDENT_PYTHONS := 3.10 3.11 3.12 3.13
# The cloud path's bare kernel (tests/course/test_cloud.py): the oldest releases that lab's metadata and
# requirements-student.txt allow, as Colab/Kaggle images are older than our pins, on the oldest student Python this
# machine has (pyenv's and Debian's too: grader/pins.py which); without one, on $(PYTHON), and 3.10 is only resolved.
CLOUD_PINS ?= numpy==1.26.0 pandas==2.2.0 matplotlib==3.8.0 ipykernel==6.29.5
CLOUD_BASE ?= $(or $(shell $(PYTHON) -m grader.pins which $(firstword $(STUDENT_PYTHONS)) 2>/dev/null),$(PYTHON))
CLOUD_VENV := build/cloud-venv/$(notdir $(CLOUD_BASE))_$(subst ==,-,$(subst $(eval) ,_,$(strip $(CLOUD_PINS))))

E2E_STAMP := $(VENV)/.e2e-installed

.PHONY: help venv check-pins lint sandbox-deps test test-fast test-rootless e2e chromium e2e-cloud demo bench bench-policies notebooks cjk-font release autograde gradebook new-assignment check-assignment nbgrader-course student-bundle gradescope hub-images clean

help:
	@echo "make demo            worked examples + the instructor pipeline end to end (outputs under build/)"
	@echo "make test            the whole test suite (with the cloud path, make e2e-cloud)"
	@echo "make test-fast       the tests not marked slow (none starts a process): minutes, no sandbox needed"
	@echo "make lint            ruff check: pyflakes and pycodestyle errors (CI runs it)"
	@echo "make check-pins      asks the package index: the lock and the student requirements install on every claimed Python"
	@echo "make test-rootless   (as root) the sandbox tests, hostile batch and demo as an unprivileged user (by hand: not in CI)"
	@echo "make e2e             a real JupyterLab in Chromium: type the answers, run, save, then make autograde"
	@echo "make bench           timings: fast vs teaching engine, schedule() scaling, notebook run, stock nbgrader vs our autograde, a hang"
	@echo "make bench-policies  policy x load x seed grid on every core: build/policy-bench/{results.csv,report.md,*.png}"
	@echo "make notebooks       regenerate notebooks/ and solutions/ from grader/assignments/ [ASSIGNMENTS='name ...']"
	@echo "make new-assignment NAME=04_words [TITLE='...']  a working two-TODO assignment in grader/assignments/NAME/"
	@echo "make check-assignment NAME=01_continuous_batching  its checklist (trivial-pass rules, unquoted rules, leaky mutants, stale zh) and its tests"
	@echo "make nbgrader-course NAME=02_decode_scheduling DIR=dir [LANGUAGE=zh]  a new stock nbgrader course graded by the kit"
	@echo "make cjk-font [CJK_SOURCE=font]  rebuild lab/cjk_font/'s subset from Noto Sans CJK SC (.otf, or Debian's .ttc)"
	@echo "make release         regenerate the student editions only"
	@echo "make autograde SUBMISSIONS=dir OUT=dir [ASSIGNMENT=$(ASSIGNMENT)] [JOBS=n] [SHARD=K/N] [SANDBOX=auto|userns|process]"
	@echo "                     [TIMES=csv|nbgrader submitted/] [EXTENSIONS=csv]  late penalties: course.toml [deadline]"
	@echo "                     [TERM_SECRET=file|public]  the term secret: LAB_TERM_SECRET or course.secret by default"
	@echo "make gradebook LMS=canvas|moodle ROSTER=roster.csv [OUT=dir] [GRADES=\$$OUT/grades.csv] [PER_TODO=1] [ABSENT=error|zero|omit]  an LMS import file (grader/lms.py)"
	@echo "make e2e-cloud       the cloud path: each notebook alone in a bare kernel with older pandas/matplotlib/numpy"
	@echo "make student-bundle  dist/<course wheel> and build/student-bundle.zip, the student-facing repository"
	@echo "make gradescope [ASSIGNMENT=$(ASSIGNMENT)] [FAILING=visible|after_due_date] [SANDBOX=auto|userns|process] [MAX_PER_DAY=n] [TERM_SECRET=file|public]"
	@echo "                     build/gradescope/<assignment>.zip, a Gradescope autograder (docs/instructors.md, Gradescope)"
	@echo "make hub-images      build/hub/<lab wheel> (checked: lab only) and, where docker is, the JupyterHub images (deploy/)"
	@echo "make sandbox-deps    install bubblewrap for the full grading sandbox (root: apt-get; else says what is missing)"

$(STAMP): requirements.txt requirements.lock pyproject.toml
	@test -n "$(PYTHON)" || { echo "error: no python3.11, python3.12, python3.13 or python3 on PATH"; exit 1; }
	@$(PYTHON) -c 'import sys; ok = sys.argv[1:]; sys.exit(0 if "%d.%d" % sys.version_info[:2] in ok else "error: make venv needs Python " + ", ".join(ok[:-1]) + " or " + ok[-1] + "; $(PYTHON) is Python " + sys.version.split()[0] + ". Name one: make venv PYTHON=python" + ok[-1])' $(INSTRUCTOR_PYTHONS)
	@echo ">> creating $(VENV) with $(PYTHON) from pinned requirements (first run only)"
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt -c requirements.lock
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	@touch $(STAMP)

venv: $(STAMP)

# Install time, so not in make test (pytest runs offline): CI runs it (.ci/run). First a pin planted with no wheel
# for Python 3.13 must fail by name; then every claimed Python resolves the lock and the student requirements,
# and where this machine has that Python, a venv under build/pins/ installs them and imports them.
check-pins: $(STAMP)
	$(PY) -m grader.check_pins planted
	$(PY) -m grader.check_pins check

# The grading sandbox needs bubblewrap and util-linux (setpriv as root; prlimit, and unprivileged user
# namespaces, without root). As root on Debian/Ubuntu this installs what is missing; anywhere else it says what is, and grading
# stops until there is a sandbox (or SANDBOX=process is given: grader/runner/cold.py).
sandbox-deps:
	@if command -v bwrap >/dev/null 2>&1 && command -v setpriv >/dev/null 2>&1 && command -v prlimit >/dev/null 2>&1; then \
		echo ">> sandbox: bubblewrap $$(bwrap --version | cut -d' ' -f2), setpriv and prlimit present"; \
		if [ "$$(id -u)" != 0 ] && ! bwrap --unshare-user --ro-bind / / true 2>/dev/null; then \
			echo ">> sandbox: but unprivileged user namespaces do not work here: grade as root, or allow them (README, Troubleshooting)"; fi; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo ">> sandbox: installing bubblewrap (apt-get)"; \
		(apt-get install -y -q bubblewrap util-linux >/dev/null 2>&1 || \
		 (apt-get update -q >/dev/null 2>&1 && apt-get install -y -q bubblewrap util-linux >/dev/null)) && \
		echo ">> sandbox: bubblewrap $$(bwrap --version | cut -d' ' -f2) installed" || \
		echo ">> sandbox: apt-get could not install bubblewrap; grading will stop unless SANDBOX=process"; \
	else \
		echo ">> sandbox: no bubblewrap here: ask for it (sudo apt-get install bubblewrap); until then grading stops unless SANDBOX=process"; \
	fi

# As root: the sandbox tests, the hostile batch and the demo class as a user who is not root (tests/rootless.sh).
test-rootless: sandbox-deps
	bash tests/rootless.sh

test: $(STAMP) sandbox-deps $(CLOUD_VENV)/.installed
	CLOUD_PYTHON=$(abspath $(CLOUD_VENV))/bin/python $(PY) -m pytest tests

# The quick tier: every test not marked slow. A test that starts a process (a sandboxed child, a kernel, nbgrader,
# a Python) is slow, and tests/conftest.py fails one that does unmarked, so this needs no sandbox and no cloud venv.
test-fast: $(STAMP)
	$(PY) -m pytest tests -m "not slow" -q

# Install time: a bare venv with only ipykernel, pandas, matplotlib and numpy, cached per version set.
$(CLOUD_VENV)/.installed:
	@echo ">> creating the cloud-like venv $(CLOUD_VENV) with $$($(CLOUD_BASE) --version) (first run only)"
	$(CLOUD_BASE) -m venv $(CLOUD_VENV)
	$(CLOUD_VENV)/bin/python -m pip install --quiet $(CLOUD_PINS)
	@touch $@

e2e-cloud: $(STAMP) $(CLOUD_VENV)/.installed
	CLOUD_PYTHON=$(abspath $(CLOUD_VENV))/bin/python $(PY) -m pytest tests/course/test_cloud.py -v

$(E2E_STAMP): $(STAMP) requirements-e2e.txt
	$(PY) -m pip install --quiet -r requirements-e2e.txt
	@touch $(E2E_STAMP)

# Debian's Chromium; Playwright is pointed at it and never downloads a browser of its own.
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  test "$$(id -u)" = 0 || { echo "error: make e2e needs Chromium; install Debian's package: sudo apt-get install chromium"; exit 1; }; \
	  echo ">> installing Debian's chromium for the browser test (first run only)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

e2e: $(E2E_STAMP) chromium sandbox-deps
	$(PY) -m pytest e2e -x -q -p no:cacheprovider

# Lint: pyflakes and pycodestyle's errors (pyproject.toml [tool.ruff]); .ci/run runs it first.
lint: $(STAMP)
	$(VENV)/bin/ruff check .

demo: $(STAMP) sandbox-deps
	$(PY) -m grader.demo

bench: $(STAMP) sandbox-deps
	$(PY) -m grader.bench

bench-policies: $(STAMP)
	$(PY) -m policybench $(BENCH_ARGS)

notebooks: $(STAMP)
	$(PY) -m grader.build all $(ASSIGNMENTS)
	$(PY) -m grader.build mistakes $(ASSIGNMENTS)

# lab's CJK subset (lab.font_subset), from the full Noto Sans CJK SC or Source Han Sans SC (SIL OFL 1.1). Without the font
# installed: apt-get download fonts-noto-cjk && dpkg-deb -x fonts-noto-cjk_*.deb x, then CJK_SOURCE=x/usr/share/...
CJK_SOURCE ?= /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc
cjk-font: $(STAMP)
	@test -f "$(CJK_SOURCE)" || { echo "no $(CJK_SOURCE): make cjk-font CJK_SOURCE=NotoSansCJKsc-Regular.otf (or NotoSansCJK-Regular.ttc)"; exit 2; }
	$(PY) -m lab.font_subset "$(CJK_SOURCE)"

release: $(STAMP)
	$(PY) -m grader.build release

autograde: $(STAMP) sandbox-deps
	@test -n "$(SUBMISSIONS)" || { echo "usage: make autograde SUBMISSIONS=dir OUT=dir [ASSIGNMENT=name]"; exit 2; }
	$(PY) -m grader.autograde --assignment $(ASSIGNMENT) --submissions $(SUBMISSIONS) --out $(OUT) --jobs $(JOBS) $(if $(SHARD),--shard $(SHARD)) $(if $(SANDBOX),--sandbox $(SANDBOX)) $(if $(TIMES),--times $(TIMES)) $(if $(EXTENSIONS),--extensions $(EXTENSIONS)) $(if $(TERM_SECRET),--term-secret $(TERM_SECRET))

# An LMS gradebook import file from a run's grades.csv and a roster (grader/lms.py says the formats and what it refuses).
GRADES ?= $(OUT)/grades.csv
gradebook: $(STAMP)
	@test -n "$(LMS)" -a -n "$(ROSTER)" || { echo "usage: make gradebook LMS=canvas|moodle ROSTER=roster.csv [OUT=dir] [GRADES=file] [PER_TODO=1] [ABSENT=error|zero|omit] [LMS_ARGS='--title ...']"; exit 2; }
	$(PY) -m grader.lms $(LMS) $(GRADES) $(ROSTER) $(if $(PER_TODO),--per-todo) $(if $(ABSENT),--absent $(ABSENT)) $(LMS_ARGS)

new-assignment: $(STAMP)
	@test -n "$(NAME)" || { echo "usage: make new-assignment NAME=04_words [TITLE='...']"; exit 2; }
	$(PY) -m grader.new_assignment $(NAME) $(if $(TITLE),--title "$(TITLE)")

# One assignment's checklist, then every test parametrised with it, slow ones aside (grader/check_assignment.py).
check-assignment: $(STAMP)
	@test -n "$(NAME)" || { echo "usage: make check-assignment NAME=01_continuous_batching"; exit 2; }
	$(PY) -m grader.check_assignment $(NAME)

nbgrader-course: $(STAMP)
	@test -n "$(NAME)" -a -n "$(DIR)" || { echo "usage: make nbgrader-course NAME=02_decode_scheduling DIR=new-folder [LANGUAGE=zh]"; exit 2; }
	$(PY) -m grader.build course $(NAME) --out $(DIR) $(if $(LANGUAGE),--language $(LANGUAGE))

student-bundle: $(STAMP)
	$(PY) -m grader.bundle

# A Gradescope autograder for one assignment (grader/gradescope.py): setup.sh, run_autograder, the kit and its pins.
# SANDBOX left empty is auto: no grade where no sandbox works in Gradescope's container (SANDBOX=process to grade anyway).
FAILING ?=
MAX_PER_DAY ?=
gradescope: $(STAMP)
	$(PY) -m grader.gradescope build --assignment $(ASSIGNMENT) $(if $(FAILING),--failing-visibility $(FAILING)) $(if $(SANDBOX),--sandbox $(SANDBOX)) $(if $(MAX_PER_DAY),--max-per-day $(MAX_PER_DAY)) $(if $(TERM_SECRET),--term-secret $(TERM_SECRET))

# The JupyterHub images (deploy/, README "JupyterHub images"): the student wheel, checked to hold lab only, and the
# images' pins checked against the repository's; then docker builds both from this folder, where docker is.
LAB_VERSION := $(shell sed -n 's/^__version__ = "\([^"]*\)".*/\1/p' lab/__init__.py)
HUB_TAG ?= $(LAB_VERSION)
hub-images: $(STAMP)
	$(PY) -m grader.hub pins
	$(PY) -m grader.hub wheel --out build/hub
	@if ! command -v docker >/dev/null 2>&1; then \
		echo ">> no docker here: the wheel is in build/hub/; build the images where docker is (README, JupyterHub images)"; \
	elif ! docker info >/dev/null 2>&1; then \
		echo ">> docker is here but its daemon is not reachable (docker info): the wheel is in build/hub/, no images built"; exit 1; \
	elif ! docker buildx version >/dev/null 2>&1; then \
		echo ">> docker has no buildx (BuildKit), which reads each image's Dockerfile.dockerignore: install docker-buildx"; exit 1; \
	else \
		set -e; \
		docker buildx build --load -f deploy/student/Dockerfile --build-arg LAB_WHEEL=decode_scheduling_lab-$(LAB_VERSION)-py3-none-any.whl -t decode-scheduling-student:$(HUB_TAG) .; \
		docker buildx build --load -f deploy/instructor/Dockerfile -t decode-scheduling-instructor:$(HUB_TAG) .; \
		echo ">> built decode-scheduling-student:$(HUB_TAG) and decode-scheduling-instructor:$(HUB_TAG)"; \
	fi

clean:
	rm -rf build .pytest_cache .hypothesis
