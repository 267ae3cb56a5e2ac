#!/usr/bin/env bash
# Installs what is missing, builds, and starts capplan-server on the bundled
# catalogue (gRPC 127.0.0.1:50051, metrics 127.0.0.1:9464). Extra arguments go
# to the server, e.g. ./scripts/serve.sh --listen 127.0.0.1:6000
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
capplan_install_packages
capplan_build --target capplan-server capplan
exec "$CAPPLAN_BUILD/bin/capplan-server" --data_dir "$CAPPLAN_ROOT/data" "$@"
