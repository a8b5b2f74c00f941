# Two commands for a fresh machine: `make run` and `make test`. Everything else is a helper.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
CONFIG ?= mineclaw-config

# The plugin needs Java 25 bytecode (current Paper); the machine's default JDK is 17, so the
# build looks for a JDK 25 beside it unless JAVA25_HOME says where one is.
JAVA25_HOME ?= $(firstword $(wildcard /usr/lib/jvm/temurin-25-jdk*) $(wildcard /usr/lib/jvm/*-25*) $(wildcard /opt/java/*25*))
MVN := JAVA_HOME=$(JAVA25_HOME) mvn -B -q --no-transfer-progress -f plugin-java/pom.xml
JAVA_STAMP := plugin-java/testkit/target/.built

.PHONY: run test install java check lint typecheck pytest bench clean

run: $(STAMP)
	$(BIN)/mineclaw-bridge serve --config $(CONFIG)

test: $(STAMP) java
	$(BIN)/pytest

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

java:
	@test -n "$(JAVA25_HOME)" || { echo "no JDK 25 found: set JAVA25_HOME" >&2; exit 1; }
	$(MVN) install

check: lint typecheck

lint: $(STAMP)
	$(BIN)/ruff check bridge tests bench
	$(BIN)/ruff format --check bridge tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/pytest

bench: $(STAMP) java
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) plugin-java/*/target
