#!/usr/bin/env bash
# ctest runs each doctest case by its name (doctest_discover_tests), and CMake splits a
# name at ';': such a case would be filtered by a shorter name that matches nothing,
# run no test, and pass. Every name must be free of it.
set -euo pipefail
tests="$1"
bad=$("$tests" --list-test-cases --no-intro --no-version 2>/dev/null | grep -F ';' || true)
if [ -n "$bad" ]; then
  echo "test cases whose name holds ';' (ctest would run nothing for them):" >&2
  echo "$bad" >&2
  exit 1
fi
echo "every test case name is whole for ctest"
