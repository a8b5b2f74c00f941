#!/usr/bin/env bash
# The two pytest passes of `make test` (side by side with MINECLAW_PARALLEL_PASSES=1): the whole suite on SQLite, and the
# suites that open stores through a config folder again on PostgreSQL. They share nothing (each
# starts its own PostgreSQL server, picks its own ports and has its own temporary folder), and
# much of their time is spent waiting on JVMs, servers and subprocesses, so on two cores the
# pair takes little more than the longer one. The SQLite pass prints as it goes; the PostgreSQL
# pass's output follows it. Each pass lists its 20 slowest tests and writes a JUnit report
# into $REPORTS (default .pytest-reports), which .ci/run totals.
#   tests/passes.sh PYTEST PG_SUITES...
set -u
PYTEST=$1
shift
REPORTS=${REPORTS:-.pytest-reports}
STAGE=$(dirname "$0")/../.ci/stage
mkdir -p "$REPORTS"
rm -f "$REPORTS"/*.xml
BASE=$(mktemp -d)
trap 'rm -rf "$BASE"' EXIT

# Serial by default: side by side (MINECLAW_PARALLEL_PASSES=1) took 22 min instead of about 28
# on two cores, but a real-model e2e test was cut off once under that load; until the suite
# holds under it, CI runs the passes one after the other.
pg_log=$BASE/postgresql.log
run_pg() {
  "$STAGE" "pytest on PostgreSQL" "$PYTEST" "$@" --storage=postgresql -m "not sqlite_only" \
    --durations=20 --basetemp="$BASE/pg" --junitxml="$REPORTS/postgresql.xml"
}
if [ "${MINECLAW_PARALLEL_PASSES:-0}" != 1 ]; then
  "$STAGE" "pytest on SQLite" "$PYTEST" --durations=20 --basetemp="$BASE/sqlite" \
    --junitxml="$REPORTS/sqlite.xml"
  sqlite_rc=$?
  run_pg "$@"
  exit $(( sqlite_rc != 0 || $? != 0 ))
fi
echo "pytest on PostgreSQL ($*) runs beside the SQLite pass; its output follows it"
run_pg "$@" >"$pg_log" 2>&1 &
pg_pid=$!
"$STAGE" "pytest on SQLite" "$PYTEST" --durations=20 --basetemp="$BASE/sqlite" \
  --junitxml="$REPORTS/sqlite.xml"
sqlite_rc=$?
wait "$pg_pid"
pg_rc=$?
echo
echo "== pytest on PostgreSQL ($*) =="
cat "$pg_log"
exit $(( sqlite_rc != 0 || pg_rc != 0 ))
