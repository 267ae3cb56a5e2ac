#!/usr/bin/python3
"""End-to-end test of the Python example client (examples/python/).

Starts the built capplan-server on a free loopback port (port 0: the kernel
picks one), runs examples/python/plan_and_validate.py against it with the
messages CMake generated into the build folder, and checks every figure the
script prints against the Plan and Validate answers of the CLI
(`capplan plan|validate ... --json --server`), at the precision printed. Also:
a FAIL verdict exits 1 as the CLI does; an unknown model, an unreachable
server, missing generated messages and a Python without grpcio each exit 2
with a reason that says what to do.

Fails, never skips, when python3-grpcio or python3-protobuf (or anything else
it needs) is missing. Every wait is bounded; the server started here is
stopped here.
"""

import argparse
import importlib.util
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

REQUIRED_MODULES = [("grpc", "python3-grpcio"), ("google.protobuf", "python3-protobuf")]
GIB = float(1 << 30)

# The request both the script and the CLI make.
DEPLOYMENT = ["--model", "qwen3-8b", "--gpu", "nvidia-l40s-48gb"]
WORKLOAD = ["--input-tokens", "1000", "--output-tokens", "200", "--ttft-p95", "1",
            "--tpot", "0.05"]
PLAN = ["--target-users", "200", "--price-per-gpu-hour", "1.2"]
EXPECTED_USERS = "40"


class Results:
    def __init__(self):
        self.passed = self.failed = 0
        self.prefix = ""  # which run the checks are about

    def check(self, name, ok, detail=""):
        name = self.prefix + name
        print(("PASS " if ok else "FAIL ") + name + ("" if ok else " " + str(detail)))
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        return ok


def missing_dependencies(args):
    missing = []
    for module, package in REQUIRED_MODULES:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ModuleNotFoundError, ValueError):
            found = False
        if not found:
            missing.append(f"Python module {module} ({package})")
    for flag, path in (("--server", args.server), ("--cli", args.cli)):
        if not os.access(path, os.X_OK):
            missing.append(f"{flag} {path} (not an executable; build it first)")
    if not os.path.isfile(args.script):
        missing.append(f"--script {args.script}")
    stub = os.path.join(args.stubs, "capplan", "v1", "planner_pb2.py")
    if not os.path.isfile(stub):
        missing.append(f"{stub} (build the target capplan_python_stubs)")
    return missing


def start_server(binary, data_dir):
    proc = subprocess.Popen(
        [binary, "--listen=127.0.0.1:0", "--metrics_listen=", f"--data_dir={data_dir}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    address = None
    deadline = time.time() + 30
    while time.time() < deadline and address is None:
        line = proc.stdout.readline()
        if not line:
            break
        m = re.search(r"gRPC on ([^\s,]+)", line)
        if m:
            address = m.group(1)
    if address is None:
        proc.kill()
        _, err = proc.communicate(timeout=10)
        raise RuntimeError(f"server did not start: {err}")
    return proc, address


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_script(args, extra, python="/usr/bin/python3", flags=()):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([python, *flags, args.script, *extra], capture_output=True,
                          text=True, timeout=90, env=env)


def run_cli(args, address, command, extra):
    p = subprocess.run([args.cli, command, "--server", address, "--json", *extra],
                       capture_output=True, text=True, timeout=90)
    return p.returncode, (json.loads(p.stdout) if p.stdout.strip() else {}), p.stderr


def get(message, path, default=0.0):
    """A field of proto3 JSON by dotted path; absent = the proto default."""
    for key in path.split("."):
        if not isinstance(message, dict) or key not in message:
            return default
        message = message[key]
    return message


def number(text):
    """'16.887 billion' -> 1.6887e10, '170,496' -> 170496.0, with its decimals."""
    m = re.fullmatch(r"(-?[\d,]+(?:\.(\d+))?)(?: (billion|million))?", text.strip())
    if not m:
        raise ValueError(f"not a printed figure: {text!r}")
    scale = {"billion": 1e9, "million": 1e6, None: 1.0}[m.group(3)]
    return float(m.group(1).replace(",", "")) * scale, len(m.group(2) or ""), scale


def close(printed, value, scale_by=1.0):
    """The printed figure equals `value` (÷ scale_by) at the printed precision."""
    shown, decimals, scale = number(printed)
    tolerance = 0.5 * 10 ** -decimals * scale + abs(value / scale_by) * 1e-9
    return abs(shown - value / scale_by) <= tolerance * 1.0000001


def short(enum_value, prefix):
    return enum_value[len(prefix):] if enum_value.startswith(prefix) else enum_value


class Output:
    """The script's stdout, line by line, with regex look-ups that fail loudly."""

    def __init__(self, text):
        self.lines = text.splitlines()

    def find(self, pattern):
        for line in self.lines:
            m = re.search(pattern, line)
            if m:
                return m
        return None


NUM = r"(-?[\d,]+(?:\.\d+)?(?: billion| million)?)"


def check_point(r, out, title, point, closed):
    users = r"(\d+) users, " if closed else ""
    m = out.find(rf"^  {title}: {users}{NUM} req/s, {NUM} output tok/s; TTFT p50 {NUM} s, "
                 rf"p95 {NUM} s, p99 {NUM} s; TPOT {NUM} s \(limit: (\w+)\)$")
    if not r.check(f"script prints the {title} with units", m is not None, "\n".join(out.lines)):
        return
    g = list(m.groups())
    if closed:
        r.check(f"{title}: users as the CLI's Plan",
                int(g.pop(0)) == get(point, "concurrent_users", 0), point)
    fields = ["requests_per_second", "output_tokens_per_second", "ttft_p50_seconds",
              "ttft_p95_seconds", "ttft_p99_seconds", "tpot_seconds"]
    bad = [f"{f}: printed {v}, CLI {get(point, f)}" for f, v in zip(fields, g[:6])
           if not close(v, get(point, f))]
    r.check(f"{title}: req/s, tok/s, TTFT p50/p95/p99 and TPOT as the CLI's Plan", not bad, bad)
    r.check(f"{title}: limit as the CLI's Plan",
            g[6] == short(get(point, "binding", ""), "LOAD_BINDING_"), (g[6], point))


def check_capacity(r, out, title, capacity):
    m = out.find(rf"^  {re.escape(title)}: {NUM} tok/s in\+out, {NUM} output tok/s; "
                 rf"{NUM} tokens/month in\+out, {NUM} output tokens/month "
                 rf"\({NUM}-day month, duty factor {NUM} %\)$")
    if not r.check(f"script prints the {title} with units", m is not None):
        return
    pairs = [("tokens_per_second_total", 1), ("output_tokens_per_second", 1),
             ("tokens_per_month_total", 1), ("output_tokens_per_month", 1),
             ("days_per_month", 1), ("duty_factor", 0.01)]
    bad = [f"{f}: printed {v}, CLI {get(capacity, f)}" for (f, s), v in zip(pairs, m.groups())
           if not close(v, get(capacity, f), scale_by=s)]
    r.check(f"{title}: tok/s, tokens/month, days, duty as the CLI's Plan", not bad, bad)


def check_plan(r, out, plan):
    memory, dep = plan.get("memory", {}), get(plan, "memory.deployment", {})
    m = out.find(r"^  deployment: (\S+) on (\d+) x (\S+), tp (\d+), (\w+)(?: [^ (]+)?"
                 r"(?: \(preset (\S+)\))?, max_model_len (\d+) tokens$")
    if r.check("script prints the resolved deployment", m is not None):
        r.check("deployment as the CLI's Plan",
                (m.group(1), int(m.group(2)), m.group(3), int(m.group(4)),
                 m.group(5), m.group(6), int(m.group(7)))
                == (dep.get("model_id"), dep.get("gpu_count"), dep.get("hardware_id"),
                    dep.get("tp"), short(dep.get("engine", ""), "ENGINE_KIND_").lower(),
                    get(memory, "provenance.engine_preset_id", None),
                    int(dep.get("max_model_len", 0))), (m.groups(), dep))
    m = out.find(rf"^  memory: fits (yes|NO); {NUM} GiB used of {NUM} GiB per GPU \({NUM} GiB "
                 rf"weights, {NUM} GiB KV pool\); KV pool {NUM} tokens$")
    if r.check("script prints the memory account in GiB and tokens", m is not None):
        per_gpu = memory.get("per_gpu", {})
        pairs = [("used_bytes", GIB), ("capacity_bytes", GIB), ("weights_bytes", GIB),
                 ("kv_pool_bytes", GIB)]
        bad = [f"{f}: printed {v}, CLI {per_gpu.get(f)}"
               for (f, s), v in zip(pairs, m.groups()[1:5])
               if not close(v, float(per_gpu.get(f, 0)), scale_by=s)]
        bad += [] if (m.group(1) == "yes") == bool(memory.get("fits")) else ["fits"]
        bad += [] if number(m.group(6))[0] == float(memory.get("kv_pool_tokens", 0)) else \
            [f"kv_pool_tokens: printed {m.group(6)}, CLI {memory.get('kv_pool_tokens')}"]
        r.check("memory figures as the CLI's Plan", not bad, bad)
    check_point(r, out, "safe point, closed loop", plan.get("safe_closed_loop", {}), True)
    check_point(r, out, "safe point, open loop", plan.get("safe_open_loop", {}), False)
    check_capacity(r, out, "capacity at the safe point", plan.get("capacity", {}))
    check_capacity(r, out, "capacity at PEAK (not a promise)", plan.get("capacity_at_peak", {}))
    sizing = plan.get("sizing", {})
    m = out.find(rf"^  sizing for (.+): (\d+) replicas, (\d+) GPUs \({NUM} (\S+) per replica\)$")
    if r.check("script prints the sizing in replicas and GPUs", m is not None):
        r.check("sizing as the CLI's Plan",
                m.group(1) == sizing.get("target") and int(m.group(2)) == sizing.get("replicas")
                and int(m.group(3)) == sizing.get("gpus") and m.group(5) == sizing.get("unit")
                and close(m.group(4), get(sizing, "safe_load_per_replica")),
                (m.groups(), sizing))
    m = out.find(rf"^  cost: {NUM} USD per million output tokens \(at {NUM} USD per GPU-hour\)$")
    if r.check("script prints the cost with its currency", m is not None):
        r.check("cost per million output tokens as the CLI's Plan",
                close(m.group(1), get(plan, "cost_per_million_output_tokens"))
                and close(m.group(2), 1.2),
                (m.groups(), plan.get("cost_per_million_output_tokens")))
    bad = []
    for p in plan.get("provenance", []):
        m = out.find(rf"^  {p['metric']} figures: (\w+), error band ±{NUM} %, (\d+) baselines$")
        if (m is None or m.group(1) != short(p.get("tier", ""), "TIER_")
                or not close(m.group(2), 100 * get(p, "error_band_fraction"))
                or int(m.group(3)) != len(p.get("baseline_ids", []))):
            bad.append(p["metric"])
    r.check("tier, error band and baselines of every metric as the CLI's Plan",
            plan.get("provenance") and not bad, bad)


def check_validate(r, out, answer, load):
    m = out.find(rf"^VALIDATE at {re.escape(load)} per replica$")
    r.check("script prints the load Validate checked", m is not None)
    m = out.find(r"^  verdict: (\w+)$")
    r.check("verdict as the CLI's Validate",
            m is not None and m.group(1) == short(answer.get("verdict", ""), "VERDICT_"),
            (m and m.group(1), answer.get("verdict")))
    printed = [(m.group(1), m.group(2)) for m in
               (re.match(r"^  finding (\w+) (\w+): ", line) for line in out.lines) if m]
    wanted = [(short(f.get("severity", ""), "SEVERITY_"), f["code"])
              for f in answer.get("findings", [])]
    r.check("findings (severity, code) as the CLI's Validate", printed == wanted,
            (printed, wanted))
    printed = [(m.group(1), m.group(2)) for m in
               (re.match(r"^  check (pass|FAIL|skipped): (.+?): ", line) for line in out.lines)
               if m]
    wanted = [("skipped" if c.get("skipped") else "pass" if c.get("passed") else "FAIL", c["name"])
              for c in answer.get("checks", [])]
    r.check("checks (result, name) as the CLI's Validate", printed == wanted and wanted,
            (printed, wanted))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--cli", required=True)
    parser.add_argument("--script", required=True)
    parser.add_argument("--stubs", required=True)
    parser.add_argument("--data-dir", required=True)
    args = parser.parse_args()

    missing = missing_dependencies(args)
    if missing:
        print("FAIL the Python client test cannot run; missing: " + "; ".join(missing))
        print("0 passed, 1 failed")
        return 1

    r = Results()
    server = None
    try:
        server, address = start_server(args.server, args.data_dir)
        common = ["--server", address, "--stubs", args.stubs]

        # The example as documented: Plan, then Validate at the expected load.
        r.prefix = "[200 users, 40 expected] "
        p = run_script(args, [*common, *DEPLOYMENT, *WORKLOAD, *PLAN,
                              "--expected-users", EXPECTED_USERS])
        code, plan, err = run_cli(args, address, "plan", [*DEPLOYMENT, *WORKLOAD, *PLAN])
        r.check("CLI plan --json answers", code == 0 and plan, err)
        vcode, answer, err = run_cli(args, address, "validate",
                                     [*DEPLOYMENT, *WORKLOAD, "--users", EXPECTED_USERS])
        r.check("CLI validate --json answers", vcode in (0, 1) and answer, err)
        r.check("script exits as the CLI's validate (0 PASS, 1 FAIL)", p.returncode == vcode,
                f"script {p.returncode}, CLI {vcode}; {p.stderr}")
        out = Output(p.stdout)
        check_plan(r, out, plan)
        check_validate(r, out, answer, f"{EXPECTED_USERS} concurrent users")

        # Open loop: a request rate as the target and as the expected load.
        r.prefix = "[20 req/s, 3 expected] "
        rps = ["--target-rps", "20", "--price-per-gpu-hour", "1.2"]
        p = run_script(args, [*common, *DEPLOYMENT, *WORKLOAD, *rps, "--expected-rps", "3"])
        code, plan, err = run_cli(args, address, "plan", [*DEPLOYMENT, *WORKLOAD, *rps])
        vcode, answer, err = run_cli(args, address, "validate",
                                     [*DEPLOYMENT, *WORKLOAD, "--rps", "3"])
        r.check("requests per second: script exits as the CLI's validate",
                code == 0 and p.returncode == vcode, f"script {p.returncode}, CLI {vcode}; {err}")
        out = Output(p.stdout)
        check_plan(r, out, plan)
        check_validate(r, out, answer, "3 req/s")

        # Above the safe concurrency: FAIL, exit 1, as the CLI.
        r.prefix = "[500 users expected] "
        p = run_script(args, [*common, *DEPLOYMENT, *WORKLOAD, *PLAN, "--expected-users", "500"])
        vcode, answer, _ = run_cli(args, address, "validate",
                                   [*DEPLOYMENT, *WORKLOAD, "--users", "500"])
        r.check("500 users: script and CLI both say FAIL and exit 1",
                p.returncode == 1 and vcode == 1 and "  verdict: FAIL" in p.stdout.splitlines(),
                f"script {p.returncode}, CLI {vcode}")
        check_validate(r, Output(p.stdout), answer, "500 concurrent users")

        # Errors exit 2 with a reason on stderr.
        r.prefix = ""
        p = run_script(args, [*common, "--model", "no-such-model"])
        r.check("unknown model: exit 2, the status code on stderr",
                p.returncode == 2 and "NOT_FOUND" in p.stderr and not p.stdout,
                (p.returncode, p.stderr))
        p = run_script(args, ["--server", f"127.0.0.1:{free_port()}", "--stubs", args.stubs,
                              "--timeout", "2"])
        r.check("unreachable server: exit 2, says so",
                p.returncode == 2 and "no capplan-server answers" in p.stderr,
                (p.returncode, p.stderr))
        p = run_script(args, ["--server", address, "--stubs", os.path.join(args.stubs, "none")])
        r.check("no generated messages: exit 2, names the CMake target",
                p.returncode == 2 and "capplan_python_stubs" in p.stderr, (p.returncode, p.stderr))
        # python3 -S leaves out site-packages: the Python without Debian's grpcio.
        p = run_script(args, common, flags=("-S",))
        r.check("Python without grpcio: exit 2, names python3-grpcio",
                p.returncode == 2 and "python3-grpcio" in p.stderr, (p.returncode, p.stderr))
    except Exception as e:  # report, then fail the run
        r.check("python client test ran without an exception", False, repr(e))
    finally:
        if server is not None and server.poll() is None:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()

    print(f"{r.passed} passed, {r.failed} failed")
    return 0 if r.failed == 0 and r.passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
