#!/usr/bin/python3
"""Offline checks of deploy/: no Docker engine or cluster here, so the files
are checked against what they must agree with.

- Prometheus rules pass `promtool check rules` and their unit tests.
- Every capplan-server flag in the Dockerfile and the Kubernetes manifest is a
  flag the built server accepts, and the ports agree with the Service.
- The Kubernetes YAML parses and names probes on the gRPC port.
- The runtime packages the Dockerfile installs exist in Debian's index.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

# A missing dependency fails the test with what is missing; it is never a skip.
try:
    import yaml
except ImportError:
    print("FAIL deploy checks cannot run; missing: Python module yaml (python3-yaml)")
    print("0 passed, 1 failed")
    sys.exit(1)

REQUIRED_PROGRAMS = [("promtool", "prometheus"), ("apt-cache", "apt")]


class Results:
    def __init__(self):
        self.passed = self.failed = 0

    def check(self, name, ok, detail=""):
        print(("PASS " if ok else "FAIL ") + name + ("" if ok else " " + detail))
        if ok:
            self.passed += 1
        else:
            self.failed += 1


def server_flags(binary):
    out = subprocess.run([binary, "--helpfull"], capture_output=True, text=True, timeout=30)
    return set(re.findall(r"--([a-z_]+) \(", out.stdout + out.stderr))


def flags_in(args):
    return [re.match(r"--([a-z_]+)", a).group(1) for a in args if a.startswith("--")]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--deploy-dir", required=True)
    parser.add_argument("--server", required=True)
    args = parser.parse_args()
    missing = [f"program {p} ({pkg})" for p, pkg in REQUIRED_PROGRAMS if shutil.which(p) is None]
    if not os.access(args.server, os.X_OK):
        missing.append(f"--server {args.server} (not an executable; build it first)")
    if missing:
        print("FAIL deploy checks cannot run; missing: " + "; ".join(missing))
        print("0 passed, 1 failed")
        return 1
    r = Results()
    prom = os.path.join(args.deploy_dir, "prometheus")
    for cmd in (["promtool", "check", "rules", "capplan-rules.yml"],
                ["promtool", "test", "rules", "capplan-rules_test.yml"]):
        p = subprocess.run(cmd, cwd=prom, capture_output=True, text=True, timeout=60)
        r.check(" ".join(cmd), p.returncode == 0, p.stdout + p.stderr)

    known = server_flags(args.server)
    r.check("capplan-server --helpfull lists its flags",
            {"listen", "metrics_listen", "data_dir"} <= known, str(sorted(known)))

    with open(os.path.join(args.deploy_dir, "Dockerfile")) as f:
        dockerfile = f.read()
    cmd = re.search(r'^CMD \[(.*)\]$', dockerfile, re.M)
    docker_args = re.findall(r'"([^"]+)"', cmd.group(1)) if cmd else []
    unknown = [f for f in flags_in(docker_args) if f not in known]
    r.check("Dockerfile CMD uses only real server flags", docker_args and not unknown, str(unknown))
    runtime = re.findall(r"FROM debian:12-slim\nRUN apt-get update && .*?install -y --no-install-recommends \\\n(.*?)&& rm",
                         dockerfile, re.S)
    packages = runtime[0].replace("\\", " ").split() if runtime else []
    missing = []
    for pkg in packages:
        p = subprocess.run(["apt-cache", "show", pkg], capture_output=True, text=True, timeout=60)
        if p.returncode != 0 or not p.stdout.strip():
            missing.append(pkg)
    r.check("Dockerfile runtime packages exist in Debian's index", packages and not missing,
            str(missing or "no packages found"))

    with open(os.path.join(args.deploy_dir, "kubernetes", "capplan.yaml")) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    kinds = {d["kind"]: d for d in docs}
    r.check("manifest has a Deployment and a Service", {"Deployment", "Service"} <= set(kinds))
    container = kinds["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    unknown = [f for f in flags_in(container["args"]) if f not in known]
    r.check("Deployment args use only real server flags", not unknown, str(unknown))
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    listen = [a for a in container["args"] if a.startswith("--listen=")][0]
    metrics = [a for a in container["args"] if a.startswith("--metrics_listen=")][0]
    r.check("container ports match --listen and --metrics_listen",
            listen.endswith(":%d" % ports["grpc"]) and metrics.endswith(":%d" % ports["metrics"]))
    probe = container["readinessProbe"].get("grpc", {})
    r.check("readiness probe is the gRPC health check on the gRPC port",
            probe.get("port") == ports["grpc"] and probe.get("service") == "capplan.v1.CapacityPlanner")
    service_ports = {p["name"] for p in kinds["Service"]["spec"]["ports"]}
    r.check("Service exposes grpc and metrics", {"grpc", "metrics"} <= service_ports)
    selector = kinds["Service"]["spec"]["selector"]
    labels = kinds["Deployment"]["spec"]["template"]["metadata"]["labels"]
    r.check("Service selector matches the pods", all(labels.get(k) == v for k, v in selector.items()))

    print(f"{r.passed} passed, {r.failed} failed")
    return 0 if r.failed == 0 and r.passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
