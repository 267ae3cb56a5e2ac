#!/usr/bin/python3
"""End-to-end test of the built capplan-server.

Starts the real server on free loopback ports, talks to it from Python with
Debian's grpcio (stubs generated here with grpc_tools): health, reflection's
service list, ListBaselines; runs the CLI against it; starts a real Prometheus
on loopback that scrapes the metrics port and asks its HTTP API whether it
counted the calls. Also checks that a catalogue with a typo stops the server
with file:line:column, and that SIGTERM drains and exits cleanly.

Every wait is bounded; everything started here is stopped here.
"""

import argparse
import importlib.util
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

GRPC_PROTO_ROOT = "/usr/share/grpc-proto"

# What the test needs besides the built binaries, with the Debian package
# that provides it (scripts/common.sh installs them). A missing one fails the
# test with this list; it is never a skip.
REQUIRED_MODULES = [
    ("grpc", "python3-grpcio"),
    ("google.protobuf", "python3-protobuf"),
]
REQUIRED_PROGRAMS = [
    ("protoc", "protobuf-compiler"),
    ("grpc_python_plugin", "protobuf-compiler-grpc"),
    ("prometheus", "prometheus"),
]
REQUIRED_FILES = [
    (os.path.join(GRPC_PROTO_ROOT, "grpc/health/v1/health.proto"), "grpc-proto"),
    (os.path.join(GRPC_PROTO_ROOT, "grpc/reflection/v1alpha/reflection.proto"), "grpc-proto"),
]


def missing_dependencies(args):
    """Every missing module, program or file as 'what (package)'."""
    missing = []
    for module, package in REQUIRED_MODULES:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ModuleNotFoundError, ValueError):
            found = False
        if not found:
            missing.append(f"Python module {module} ({package})")
    for program, package in REQUIRED_PROGRAMS:
        if shutil.which(program) is None:
            missing.append(f"program {program} ({package})")
    for path, package in REQUIRED_FILES:
        if not os.path.isfile(path):
            missing.append(f"file {path} ({package})")
    for flag, path in (("--server", args.server), ("--cli", args.cli)):
        if not os.access(path, os.X_OK):
            missing.append(f"{flag} {path} (not an executable; build it first)")
    return missing


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Results:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, name, condition, detail=""):
        if condition:
            self.passed += 1
            print(f"PASS {name}")
        else:
            self.failed += 1
            print(f"FAIL {name} {detail}")


def generate_stubs(proto_dir, out_dir):
    """Python stubs from Debian's protoc 3.21 and grpc_python_plugin."""
    os.makedirs(out_dir, exist_ok=True)
    files = [
        (proto_dir, "capplan/v1/catalog.proto"),
        (proto_dir, "capplan/v1/planner.proto"),
        (GRPC_PROTO_ROOT, "grpc/health/v1/health.proto"),
        (GRPC_PROTO_ROOT, "grpc/reflection/v1alpha/reflection.proto"),
    ]
    for root, name in files:
        subprocess.run([
            "protoc", f"-I{root}", f"-I{proto_dir}",
            "--plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin",
            f"--python_out={out_dir}", f"--grpc_python_out={out_dir}", name,
        ], check=True, timeout=60)
    for dirpath, _, _ in os.walk(out_dir):
        if dirpath != os.path.join(out_dir, "grpc"):
            open(os.path.join(dirpath, "__init__.py"), "a").close()
    sys.path.insert(0, out_dir)
    # grpc.health / grpc.reflection live beside grpcio's own package.
    import grpc
    grpc.__path__.append(os.path.join(out_dir, "grpc"))


def start_server(binary, data_dir):
    """Starts the server on port 0; returns (process, grpc_address, metrics_address)."""
    proc = subprocess.Popen(
        [binary, "--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0",
         f"--data_dir={data_dir}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    grpc_address = metrics_address = None
    deadline = time.time() + 30
    while time.time() < deadline and (grpc_address is None or metrics_address is None):
        line = proc.stdout.readline()
        if not line:
            break
        m = re.search(r"gRPC on (\S+?),? ", line + " ")
        if m:
            grpc_address = m.group(1).rstrip(",")
        m = re.search(r"metrics on http://(\S+)/metrics", line)
        if m:
            metrics_address = m.group(1)
    if grpc_address is None or metrics_address is None:
        proc.kill()
        out, err = proc.communicate(timeout=10)
        raise RuntimeError(f"server did not start: {err}")
    return proc, grpc_address, metrics_address


def http_get_json(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return json.loads(response.read().decode())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--cli", required=True)
    parser.add_argument("--proto-dir", required=True)
    parser.add_argument("--data-dir", required=True)
    args = parser.parse_args()

    missing = missing_dependencies(args)
    if missing:
        print("FAIL e2e cannot run; missing: " + "; ".join(missing))
        print("0 passed, 1 failed")
        return 1

    results = Results()
    work = tempfile.mkdtemp(prefix="capplan-e2e-")
    server = prometheus = None
    try:
        generate_stubs(args.proto_dir, os.path.join(work, "stubs"))
        import grpc
        from capplan.v1 import planner_pb2, planner_pb2_grpc
        from grpc.health.v1 import health_pb2, health_pb2_grpc
        from grpc.reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

        server, grpc_address, metrics_address = start_server(args.server, args.data_dir)
        channel = grpc.insecure_channel(grpc_address)
        grpc.channel_ready_future(channel).result(timeout=15)

        # Health.
        health = health_pb2_grpc.HealthStub(channel)
        reply = health.Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
        results.check("health SERVING", reply.status == health_pb2.HealthCheckResponse.SERVING)
        reply = health.Check(
            health_pb2.HealthCheckRequest(service="capplan.v1.CapacityPlanner"), timeout=5)
        results.check("health SERVING for capplan.v1.CapacityPlanner",
                      reply.status == health_pb2.HealthCheckResponse.SERVING)

        # Reflection lists our service.
        reflection = reflection_pb2_grpc.ServerReflectionStub(channel)
        responses = reflection.ServerReflectionInfo(
            iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=5)
        services = [s.name for r in responses for s in r.list_services_response.service]
        results.check("reflection lists capplan.v1.CapacityPlanner",
                      "capplan.v1.CapacityPlanner" in services, str(services))

        # The catalogue RPCs.
        planner = planner_pb2_grpc.CapacityPlannerStub(channel)
        listed = planner.ListBaselines(planner_pb2.ListBaselinesRequest(), timeout=5)
        seeds = [b.provenance.source_document for b in listed.baselines]
        results.check("ListBaselines returns the three seed reports",
                      all(any(s.startswith(p) for s in seeds) for p in ("000_", "002_", "004_")),
                      str(seeds))
        try:
            planner.GetHardware(planner_pb2.GetHardwareRequest(id="no-such-gpu"), timeout=5)
            results.check("GetHardware unknown id is NOT_FOUND", False, "no error")
        except grpc.RpcError as e:
            results.check("GetHardware unknown id is NOT_FOUND",
                          e.code() == grpc.StatusCode.NOT_FOUND, str(e.code()))

        # The CLI answers the same against the server as offline.
        online = subprocess.run([args.cli, "baselines", "list", "--json", "--server", grpc_address],
                                capture_output=True, text=True, timeout=30)
        offline = subprocess.run([args.cli, "baselines", "list", "--json",
                                  "--data-dir", args.data_dir],
                                 capture_output=True, text=True, timeout=30)
        results.check("CLI --server exits 0", online.returncode == 0, online.stderr)
        results.check("CLI offline and --server print the same JSON",
                      online.stdout == offline.stdout and online.stdout.strip() != "")
        results.check("CLI JSON keeps snake_case names",
                      '"source_document"' in online.stdout)

        # A real Prometheus scrapes the metrics port.
        prom_port = free_port()
        config = os.path.join(work, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                    "scrape_configs:\n  - job_name: capplan\n    static_configs:\n"
                    f"      - targets: ['{metrics_address}']\n")
        prometheus = subprocess.Popen(
            ["prometheus", f"--config.file={config}",
             f"--storage.tsdb.path={os.path.join(work, 'tsdb')}",
             f"--web.listen-address=127.0.0.1:{prom_port}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        query = urllib.parse.quote('sum(grpc_server_handled_total{grpc_method="ListBaselines",grpc_code="OK"})')
        value = None
        deadline = time.time() + 90
        while time.time() < deadline:
            try:
                answer = http_get_json(f"http://127.0.0.1:{prom_port}/api/v1/query?query={query}")
                data = answer.get("data", {}).get("result", [])
                if data:
                    value = float(data[0]["value"][1])
                    if value >= 1:
                        break
            except OSError:
                pass
            time.sleep(1)
        results.check("Prometheus scraped grpc_server_handled_total for ListBaselines",
                      value is not None and value >= 1, f"value={value}")
        answer = http_get_json(
            f"http://127.0.0.1:{prom_port}/api/v1/query?query="
            + urllib.parse.quote('capplan_catalog_entries{kind="baseline"}'))
        entries = answer.get("data", {}).get("result", [])
        results.check("Prometheus sees capplan_catalog_entries",
                      bool(entries) and float(entries[0]["value"][1]) >= 3, str(entries))

        # SIGTERM drains and exits 0.
        server.send_signal(signal.SIGTERM)
        try:
            code = server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            code = None
        results.check("SIGTERM stops the server with exit code 0", code == 0, f"code={code}")
        server = None

        # A typo in a catalogue file stops the server with file:line:column.
        broken = os.path.join(work, "broken-data")
        shutil.copytree(args.data_dir, broken)
        victim = os.path.join(broken, "hardware", "nvidia-l4-24gb.txtpb")
        with open(victim) as f:
            text = f.read()
        with open(victim, "w") as f:
            f.write(text.replace("vendor:", "vendro:", 1))
        proc = subprocess.run([args.server, "--listen=127.0.0.1:0", "--metrics_listen=",
                               f"--data_dir={broken}"],
                              capture_output=True, text=True, timeout=30)
        results.check("server refuses a catalogue with a typo",
                      proc.returncode != 0, f"rc={proc.returncode}")
        results.check("the refusal names file:line:column",
                      re.search(r"hardware/nvidia-l4-24gb\.txtpb:\d+:\d+:", proc.stderr) is not None,
                      proc.stderr[:300])
    except Exception as e:  # report, then fail the run
        results.check("e2e ran without an exception", False, repr(e))
    finally:
        for proc in (server, prometheus):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
        shutil.rmtree(work, ignore_errors=True)

    print(f"{results.passed} passed, {results.failed} failed")
    return 0 if results.failed == 0 and results.passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
