#!/bin/bash
# VM tests: run inside the patched kernel by `make check-vm`, as root.
exec "$(dirname "$0")/../run-suite.sh" "$(dirname "$0")" "${CGSTREAM_TEST_TIMEOUT:-900}"
