# Two commands for a fresh machine: `make run` and `make test`. Everything else is a helper.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
CONFIG ?= mineclaw-config
# Times a step into .ci/run's table of stages (a plain run when MINECLAW_STAGE_LOG is unset).
STAGE  := bash .ci/stage

# The plugin needs Java 25 bytecode (current Paper); the machine's default JDK is 17, so the
# build looks for a JDK 25 beside it unless JAVA25_HOME says where one is.
JAVA25_HOME ?= $(firstword $(wildcard /usr/lib/jvm/temurin-25-jdk*) $(wildcard /usr/lib/jvm/*-25*) $(wildcard /opt/java/*25*))
MVN := env JAVA_HOME=$(JAVA25_HOME) mvn -B -q --no-transfer-progress -f plugin-java/pom.xml

# paper-api (for the Paper adapter, its MockBukkit suites and the link check) comes from the
# PaperMC repository. Where that is unreachable, jars built from Paper's public sources may sit in
# ../shared/paper-api; `paper-api` installs them into the local Maven repository (once) under the
# version strings PaperMC publishes. With neither, the adapter is skipped with one line saying so.
SHARED_PAPER ?= $(wildcard ../shared/paper-api)
M2_REPO ?= $(HOME)/.m2/repository
PAPERMC_PROBE := https://repo.papermc.io/repository/maven-public/io/papermc/paper/paper-api/maven-metadata.xml
PAPER_JAR = $(M2_REPO)/io/papermc/paper/paper-api/$(1)/paper-api-$(1).jar
# True when the Paper modules can resolve paper-api: installed locally, or PaperMC answers.
PAPER_REACHABLE = test -f $(call PAPER_JAR,1.21.4-R0.1-SNAPSHOT) || curl -sfI -m 10 -o /dev/null $(PAPERMC_PROBE)
# shared file stem -> version string (the compile API, MockBukkit's two, the newest)
PAPER_APIS := paper-api-1.21.4-src:1.21.4-R0.1-SNAPSHOT paper-api-1.21.11-src:1.21.11-R0.1-SNAPSHOT \
	paper-api-26.1.2-src:26.1.2.build.72-stable paper-api-26.2.build.92-stable:26.2.build.92-stable
INSTALL_FILE := mvn -B -q --no-transfer-progress \
	org.apache.maven.plugins:maven-install-plugin:3.1.3:install-file -Dmaven.repo.local=$(M2_REPO)

.PHONY: run try test install release postgres seccomp chromium java plugin paper-api model-servers check lint typecheck pytest pytest-postgresql bench clean

# ./mineclaw-bridge runs the command in .venv; the lines serve prints name it so, and the
# README's commands use it (no shell has .venv/bin on its PATH).
run: $(STAMP)
	./mineclaw-bridge serve --init --config $(CONFIG)

# The playground: chat as a player on a simulated server linked to a real bridge; offline, the
# scripted model answers (docs/install.md#try-it-offline).
try: $(STAMP)
	./mineclaw-bridge try --config $(CONFIG)

# The second pass runs the suites that open stores through a config folder (or the run's
# chosen storage) again with every folder on a fresh database of the tests' own PostgreSQL
# server; tests/store runs on both backends in the first pass already. Tests marked
# sqlite_only are about SQLite files and ran in the first pass.
PG_SUITES := tests/app tests/interaction tests/turns tests/policy

test: $(STAMP) java postgres seccomp chromium model-servers
	@bash tests/passes.sh $(BIN)/pytest $(PG_SUITES)

install: $(STAMP) postgres seccomp chromium

# $(call distribution_package,FOUND,PACKAGE,WHAT NEEDS IT): when the FOUND command fails, root
# installs the distribution's PACKAGE; anyone else is told the command.
define distribution_package
	@if ! { $(1); }; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing $(2) from the distribution ($(3))"; \
	    export DEBIAN_FRONTEND=noninteractive; \
	    apt-get update -qq && apt-get install -y -qq --no-install-recommends $(2) >/dev/null \
	      || { echo "apt-get install $(2) failed" >&2; exit 1; }; \
	  else \
	    echo "$(2) is not installed ($(3)): sudo apt-get install -y $(2)" >&2; \
	    exit 1; \
	  fi; \
	fi
endef

# The storage tests and the store bench start a PostgreSQL server of their own (initdb in a
# temporary folder, see tests/postgres_server.py); they need the server's binaries, not a
# running service. Debian keeps them in /usr/lib/postgresql/<version>/bin, off PATH.
PG_FOUND ?= command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1
postgres:
	$(call distribution_package,$(PG_FOUND),postgresql,the storage tests start their own server)

# Function workers load libseccomp (Debian's libseccomp2, through ctypes) for their seccomp
# filter; without it the layer is reported unavailable and the confinement tests fail.
SECCOMP_FOUND ?= ldconfig -p 2>/dev/null | grep -q 'libseccomp\.so\.2'
seccomp:
	$(call distribution_package,$(SECCOMP_FOUND),libseccomp2,the Function workers' seccomp filter)

# The console's browser tests (tests/console) drive Debian's chromium through Playwright's
# Python API with executable_path (Playwright's own browser download is not used).
CHROMIUM_FOUND ?= test -x /usr/bin/chromium
chromium:
	$(call distribution_package,$(CHROMIUM_FOUND),chromium,the console's browser tests)

# The real model servers of tests/realserver (llama-cpp-python's server and llama.cpp's
# llama-server, built from source once per version into ~/.cache/mineclaw/model-servers; root
# installs a compiler and cmake when missing). Without a compiler: one line, and those tests
# are not run.
model-servers:
	@PYTHON=$(PYTHON) $(STAGE) "model servers (cached after the first)" bash tests/realserver/build.sh

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

java: paper-api
	@test -n "$(JAVA25_HOME)" || { echo "no JDK 25 found: set JAVA25_HOME" >&2; exit 1; }
	@if $(PAPER_REACHABLE); then $(STAGE) "java (build and JUnit)" $(MVN) -Ppaper install; else \
	  echo "not built: the Paper adapter (plugin-java/paper, its MockBukkit suites, the link check): neither the PaperMC repository nor ../shared/paper-api is reachable" >&2; \
	  $(STAGE) "java (build and JUnit)" $(MVN) install; fi

# The server owner's jar: plugin-java/paper/target/Mineclaw-<version>.jar (needs paper-api, see above),
# carrying the checkout's bridge wheel for bridge.managed (in paper/target/bridge-wheel, where the
# paper module takes it from; a later make java carries it too, until mvn clean).
plugin: $(STAMP) paper-api
	@test -n "$(JAVA25_HOME)" || { echo "no JDK 25 found: set JAVA25_HOME" >&2; exit 1; }
	@$(PAPER_REACHABLE) || { echo "not built: the plugin jar needs paper-api: neither the PaperMC repository ($(PAPERMC_PROBE:/maven-metadata.xml=)) nor ../shared/paper-api is reachable" >&2; exit 1; }
	@$(BIN)/python release/build.py --plugin-wheel plugin-java/paper/target/bridge-wheel >/dev/null
	$(MVN) -Ppaper -pl paper -am package -DskipTests
	@ls plugin-java/paper/target/Mineclaw-*.jar

# The artifacts of the tagged commit at HEAD in dist/: the plugin jar, the bridge wheel and sdist,
# SHA-256 sums, the version's CHANGELOG section, LICENSE and NOTICE; byte-identical from any two
# builds of one tag (release/build.py says how). The tag vX.Y.Z is the version.
release: $(STAMP) paper-api
	@test -n "$(JAVA25_HOME)" || { echo "no JDK 25 found: set JAVA25_HOME" >&2; exit 1; }
	@$(PAPER_REACHABLE) || { echo "no release: the plugin jar needs paper-api: neither the PaperMC repository nor ../shared/paper-api is reachable" >&2; exit 1; }
	JAVA_HOME=$(JAVA25_HOME) $(BIN)/python release/build.py

# Installs each shared jar the local repository lacks; does nothing without ../shared/paper-api.
# The shared poms name a placeholder version, so each is copied with the real version string.
paper-api:
ifneq ($(SHARED_PAPER),)
	@test -f $(M2_REPO)/com/mojang/brigadier/1.3.10/brigadier-1.3.10.jar || $(INSTALL_FILE) \
	  -Dfile=$(SHARED_PAPER)/brigadier-1.3.10.jar -DpomFile=$(SHARED_PAPER)/brigadier.pom.xml
	@mkdir -p plugin-java/target/paper-api-poms
	@for pair in $(PAPER_APIS); do stem=$${pair%%:*}; version=$${pair##*:}; \
	  jar=$(M2_REPO)/io/papermc/paper/paper-api/$$version/paper-api-$$version.jar; \
	  test -f $$jar && continue; \
	  pom=$(SHARED_PAPER)/$$stem.pom.xml; test -f $$pom || pom=$(SHARED_PAPER)/paper-api.pom.xml; \
	  sed -E '/<artifactId>paper-api<\/artifactId>/{n;s#<version>[^<]*</version>#<version>'$$version'</version>#;}' \
	    $$pom > plugin-java/target/paper-api-poms/$$version.pom; \
	  $(INSTALL_FILE) -Dfile=$(SHARED_PAPER)/$$stem.jar -DpomFile=plugin-java/target/paper-api-poms/$$version.pom \
	    || exit 1; done
endif

check: lint typecheck

lint: $(STAMP)
	$(STAGE) lint $(BIN)/ruff check bridge tests bench release
	$(STAGE) "lint (format)" $(BIN)/ruff format --check bridge tests bench release

typecheck: $(STAMP)
	$(STAGE) types $(BIN)/mypy

pytest: $(STAMP) postgres
	$(BIN)/pytest

pytest-postgresql: $(STAMP) java postgres
	$(BIN)/pytest $(PG_SUITES) --storage=postgresql -m "not sqlite_only"

bench: $(STAMP) java postgres
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) plugin-java/*/target plugin-java/target
