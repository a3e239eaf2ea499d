#!/bin/bash
# Host tests (no patched kernel needed).
exec "$(dirname "$0")/../run-suite.sh" "$(dirname "$0")" "${CGSTREAM_TEST_TIMEOUT:-900}"
