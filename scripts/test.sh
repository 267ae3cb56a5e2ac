#!/usr/bin/env bash
# Installs what is missing, builds everything (tests and benchmarks), and runs
# the whole test suite: unit, data, in-process server and end-to-end tests.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
capplan_install_packages
capplan_build
cd "$CAPPLAN_BUILD"
ctest --output-on-failure -j2 --timeout 300 "$@"
