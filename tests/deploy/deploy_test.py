#!/usr/bin/python3
"""Offline checks of deploy/: no Docker engine or cluster here, so the files
are checked against what they must agree with.

- Prometheus rules pass `promtool check rules` and their unit tests, and the
  unit tests cover every alert both firing and not firing.
- Every capplan-server flag in the Dockerfile and the Kubernetes manifest is a
  flag the built server accepts; the server starts with the Deployment's
  arguments (its addresses moved to loopback port 0) and drains on SIGTERM.
- The Kubernetes YAML parses and holds the objects it must; they agree with
  each other: selectors and labels, ports by name and number, probes on the
  gRPC port, the autoscaler's target, the disruption budget against the
  autoscaler's minimum, the NetworkPolicy covering both ports, the
  ServiceMonitor on the metrics port, non-root with a read-only root, the
  grace period against preStop + --drain_timeout.
- The Grafana dashboard and the rules name only metrics (and labels) that the
  server exports, taken from a real scrape of the server started here, and
  their PromQL parses (promtool).
- The runtime packages the Dockerfile installs exist in Debian's index.
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

# A missing dependency fails the test with what is missing; it is never a skip.
try:
    import yaml
except ImportError:
    print("FAIL deploy checks cannot run; missing: Python module yaml (python3-yaml)")
    print("0 passed, 1 failed")
    sys.exit(1)

REQUIRED_PROGRAMS = [("promtool", "prometheus"), ("apt-cache", "apt")]

# Labels Prometheus adds to every scraped series (target and Kubernetes
# discovery labels), which a query may filter on although the server does not
# export them.
TARGET_LABELS = {"job", "instance", "namespace", "pod", "service", "endpoint", "container"}
# Label values a short run does not produce but metrics.cc does.
KNOWN_LABEL_VALUES = {"result": {"success", "failure"}}
# Grafana's interval variables, replaced by a duration before PromQL is parsed.
GRAFANA_INTERVALS = re.compile(r"\$__(rate_interval|interval|range)\b")
PROMQL_KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool",
                   "offset", "and", "or", "unless", "atan2", "inf", "nan"}
LABEL_LIST_KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right"}
AGGREGATIONS = {"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count",
                "count_values", "bottomk", "topk", "quantile"}
TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`|[A-Za-z_:][A-Za-z0-9_:]*'
                   r'|\d+(?:\.\d+)?(?:[eE][+-]?\d+)?[a-zA-Z]*|=~|!~|!=|==|>=|<=|\S')


class Results:
    def __init__(self):
        self.passed = self.failed = 0

    def check(self, name, ok, detail=""):
        print(("PASS " if ok else "FAIL ") + name + ("" if ok else " " + str(detail)))
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        return ok


def server_flags(binary):
    out = subprocess.run([binary, "--helpfull"], capture_output=True, text=True, timeout=30)
    return set(re.findall(r"--([a-z_]+) \(", out.stdout + out.stderr))


def flags_in(args):
    return [re.match(r"--([a-z_]+)", a).group(1) for a in args if a.startswith("--")]


def flag_value(args, name):
    values = [a.split("=", 1)[1] for a in args if a.startswith(f"--{name}=")]
    return values[0] if values else None


def seconds_of(duration):
    """Abseil/Go duration '10s', '1m30s', '500ms' -> seconds."""
    units = {"h": 3600, "m": 60, "s": 1, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
    parts = re.findall(r"(\d+(?:\.\d+)?)(h|ms|us|ns|m|s)", duration or "")
    return sum(float(n) * units[u] for n, u in parts) if parts else None


def matches(selector, labels):
    """A matchLabels selector (dict) against an object's labels."""
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


# ------------------------------------------------------------------ PromQL


def promql_references(expr):
    """Metric names, per-metric matcher labels and aggregation labels of a query.

    Returns (metrics, selectors, grouping): metrics a set of names; selectors a list
    of (metric or None, [(label, op, value)]); grouping the labels named in by /
    without / on / ignoring / group_left / group_right clauses.
    """
    tokens = TOKEN.findall(GRAFANA_INTERVALS.sub("5m", expr))
    metrics, selectors, grouping = set(), [], set()
    i = 0
    while i < len(tokens):
        t = tokens[i]
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
        if t.lower() in LABEL_LIST_KEYWORDS and nxt == "(":
            j = i + 2
            while j < len(tokens) and tokens[j] != ")":
                if re.match(r"[A-Za-z_]", tokens[j]):
                    grouping.add(tokens[j])
                j += 1
            i = j + 1
            continue
        if t == "[":  # a range or subquery: durations only
            while i < len(tokens) and tokens[i] != "]":
                i += 1
            i += 1
            continue
        if t in AGGREGATIONS and nxt.lower() in ("by", "without"):
            i += 1
            continue
        metric = None
        if re.match(r"[A-Za-z_:]", t) and nxt != "(" and t.lower() not in PROMQL_KEYWORDS:
            metric = t
            metrics.add(t)
            i += 1
            t = tokens[i] if i < len(tokens) else ""
        if t == "{":
            matchers = []
            j = i + 1
            while j + 2 < len(tokens) and tokens[j] != "}":
                if tokens[j] == ",":
                    j += 1
                    continue
                label, op, value = tokens[j], tokens[j + 1], tokens[j + 2]
                matchers.append((label, op, value[1:-1]))
                j += 3
            selectors.append((metric, matchers))
            i = j + 1
            continue
        if metric is not None:
            selectors.append((metric, []))
            continue
        i += 1
    return metrics, selectors, grouping


def promtool_parses(exprs, work):
    """promtool check rules over the queries as recording rules: (ok, output)."""
    rules = {"groups": [{"name": "dashboard", "rules": [
        {"record": f"dashboard:query_{n}", "expr": GRAFANA_INTERVALS.sub("5m", e)}
        for n, e in enumerate(exprs)]}]}
    path = os.path.join(work, "dashboard-queries.yml")
    with open(path, "w") as f:
        yaml.safe_dump(rules, f)
    p = subprocess.run(["promtool", "check", "rules", path], capture_output=True, text=True,
                       timeout=60)
    return p.returncode == 0, p.stdout + p.stderr


def check_queries(r, what, exprs, scrape, extra_metrics=()):
    """Every metric and label the queries name exists in the scrape."""
    unknown_metrics, unknown_labels, unknown_values = set(), set(), set()
    for expr in exprs:
        metrics, selectors, grouping = promql_references(expr)
        unknown_metrics |= {m for m in metrics if m not in scrape and m not in extra_metrics}
        available = set(TARGET_LABELS)
        for m in metrics:
            available |= set(scrape.get(m, {}))
        for metric, matchers in selectors:
            labels = scrape.get(metric, {}) if metric else {}
            for label, op, value in matchers:
                if metric in extra_metrics:
                    continue
                if label not in labels and label not in TARGET_LABELS:
                    unknown_labels.add(f"{metric}{{{label}}}")
                elif op == "=" and label in labels:
                    values = labels[label] | KNOWN_LABEL_VALUES.get(label, set())
                    if value not in values:
                        unknown_values.add(f'{metric}{{{label}="{value}"}}')
        unknown_labels |= {f"by ({g})" for g in grouping if g not in available}
    r.check(f"{what} name only metrics the server exports", not unknown_metrics,
            sorted(unknown_metrics))
    r.check(f"{what} filter and group by labels those metrics carry", not unknown_labels,
            sorted(unknown_labels))
    r.check(f"{what} match label values the server exports", not unknown_values,
            sorted(unknown_values))


# ------------------------------------------------------------ live server


def parse_scrape(text):
    """Prometheus text format -> {metric: {label: {values}}}."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r"([A-Za-z_:][A-Za-z0-9_:]*)(\{(.*)\})?\s", line)
        if not m:
            continue
        labels = out.setdefault(m.group(1), {})
        for k, v in re.findall(r'([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"', m.group(3) or ""):
            labels.setdefault(k, set()).add(v)
    return out


def start_server(binary, args):
    proc = subprocess.Popen([binary] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    grpc_address = metrics_address = None
    deadline = time.time() + 30
    while time.time() < deadline and (grpc_address is None or metrics_address is None):
        line = proc.stdout.readline()
        if not line:
            break
        m = re.search(r"gRPC on ([^\s,]+)", line)
        if m:
            grpc_address = m.group(1)
        m = re.search(r"metrics on http://(\S+)/metrics", line)
        if m:
            metrics_address = m.group(1)
    if grpc_address is None or metrics_address is None:
        proc.kill()
        _, err = proc.communicate(timeout=10)
        raise RuntimeError(f"server did not start with {args}: {err}")
    return proc, grpc_address, metrics_address


def scrape_server(r, binary, cli, data_dir, container_args, drain):
    """Starts the server with the Deployment's args on loopback; returns its scrape."""
    args = []
    for a in container_args:
        if a.startswith("--listen="):
            a = "--listen=127.0.0.1:0"
        elif a.startswith("--metrics_listen="):
            a = "--metrics_listen=127.0.0.1:0"
        elif a.startswith("--data_dir="):
            a = f"--data_dir={data_dir}"
        args.append(a)
    proc, grpc_address, metrics_address = start_server(binary, args)
    try:
        r.check("the server starts with the Deployment's args (addresses on loopback)", True)
        # Traffic, so the per-RPC families have series: OK and NotFound answers.
        for cmd in (["baselines", "list"], ["hardware", "list"],
                    ["baselines", "get", "no-such-baseline"]):
            subprocess.run([cli, *cmd, "--server", grpc_address], capture_output=True,
                           text=True, timeout=30)
        with urllib.request.urlopen(f"http://{metrics_address}/metrics", timeout=10) as f:
            text = f.read().decode()
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=(drain or 10) + 10)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = None
    r.check("SIGTERM drains within --drain_timeout and exits 0", code == 0, f"code={code}")
    return parse_scrape(text)


# ----------------------------------------------------------------- checks


def check_rules(r, prom_dir, proto_text):
    with open(os.path.join(prom_dir, "capplan-rules.yml")) as f:
        rules = yaml.safe_load(f)
    with open(os.path.join(prom_dir, "capplan-rules_test.yml")) as f:
        tests = yaml.safe_load(f)
    alerts = [rule["alert"] for g in rules["groups"] for rule in g["rules"] if "alert" in rule]
    firing, quiet = set(), set()
    for t in tests.get("tests", []):
        for case in t.get("alert_rule_test", []):
            (firing if case.get("exp_alerts") else quiet).add(case["alertname"])
    r.check("rules define alerts", bool(alerts))
    r.check("every alert has a unit test where it fires",
            not [a for a in alerts if a not in firing], [a for a in alerts if a not in firing])
    r.check("every alert has a unit test where it does not fire",
            not [a for a in alerts if a not in quiet], [a for a in alerts if a not in quiet])
    r.check("the unit tests name only alerts the rules define",
            (firing | quiet) <= set(alerts), sorted((firing | quiet) - set(alerts)))
    # Method names in the rules are RPCs of the service (a typo never fires).
    rpcs = set(re.findall(r"^\s*rpc\s+(\w+)\s*\(", proto_text, re.M))
    named = set()
    for g in rules["groups"]:
        for rule in g["rules"]:
            for op, value in re.findall(r'grpc_method(=~|!~|=|!=)"([^"]*)"', rule["expr"]):
                named |= set(value.split("|")) if "~" in op else {value}
    r.check("the rules' grpc_method values are RPCs of planner.proto",
            rpcs and named and named <= rpcs, sorted(named - rpcs))
    slow = [a for a in alerts if a.startswith("CapplanSlow")]
    by_expr = {rule["alert"]: rule["expr"] for g in rules["groups"] for rule in g["rules"]
               if "alert" in rule}
    own = [m for m in ("Plan", "Validate", "PredictLoad")
           if any(f'grpc_method="{m}"' in by_expr[a] for a in slow)]
    r.check("Plan, Validate and PredictLoad have latency thresholds of their own",
            own == ["Plan", "Validate", "PredictLoad"], own)
    return rules


def check_manifest(r, docs, known, dockerfile):
    kinds = {}
    for d in docs:
        kinds.setdefault(d["kind"], []).append(d)
    need = {"Deployment", "Service", "HorizontalPodAutoscaler", "PodDisruptionBudget",
            "NetworkPolicy", "ServiceMonitor"}
    r.check("manifest has a Deployment, Service, HorizontalPodAutoscaler, "
            "PodDisruptionBudget, NetworkPolicy and ServiceMonitor",
            need <= set(kinds) and all(len(kinds[k]) == 1 for k in need),
            {k: len(kinds.get(k, [])) for k in need})
    if not need <= set(kinds):
        return None
    dep, svc = kinds["Deployment"][0], kinds["Service"][0]
    hpa, pdb = kinds["HorizontalPodAutoscaler"][0], kinds["PodDisruptionBudget"][0]
    netpol, smon = kinds["NetworkPolicy"][0], kinds["ServiceMonitor"][0]
    expected_api = {"Deployment": "apps/v1", "Service": "v1",
                    "HorizontalPodAutoscaler": "autoscaling/v2",
                    "PodDisruptionBudget": "policy/v1", "NetworkPolicy": "networking.k8s.io/v1",
                    "ServiceMonitor": "monitoring.coreos.com/v1"}
    wrong = {k: kinds[k][0]["apiVersion"] for k in need
             if kinds[k][0]["apiVersion"] != expected_api[k]}
    r.check("objects use current API versions", not wrong, wrong)

    pod = dep["spec"]["template"]
    pod_spec = pod["spec"]
    labels = pod["metadata"]["labels"]
    container = pod_spec["containers"][0]
    args = container["args"]
    unknown = [f for f in flags_in(args) if f not in known]
    r.check("Deployment args use only real server flags", not unknown, unknown)
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    listen, metrics = flag_value(args, "listen") or "", flag_value(args, "metrics_listen") or ""
    r.check("container ports match --listen and --metrics_listen",
            listen.endswith(":%d" % ports.get("grpc", -1))
            and metrics.endswith(":%d" % ports.get("metrics", -1)), (listen, metrics, ports))
    r.check("the server listens on all of the pod's addresses (0.0.0.0; the NetworkPolicy "
            "decides who connects, deploy/README.md)",
            listen.startswith("0.0.0.0:") and metrics.startswith("0.0.0.0:"), (listen, metrics))
    r.check("Deployment selector matches its pod labels",
            matches(dep["spec"]["selector"]["matchLabels"], labels))

    probe = container["readinessProbe"].get("grpc", {})
    r.check("readiness probe is the gRPC health check on the gRPC port",
            probe.get("port") == ports["grpc"]
            and probe.get("service") == "capplan.v1.CapacityPlanner")
    r.check("liveness probe is the gRPC health check on the gRPC port",
            container["livenessProbe"].get("grpc", {}).get("port") == ports["grpc"])

    service_ports = {p["name"]: p for p in svc["spec"]["ports"]}
    r.check("Service exposes grpc and metrics", {"grpc", "metrics"} <= set(service_ports))
    bad = {n: p.get("targetPort") for n, p in service_ports.items()
           if p.get("targetPort") not in ports and p.get("targetPort") not in ports.values()}
    r.check("Service targetPorts name container ports", not bad, bad)
    r.check("Service selector matches the pods", matches(svc["spec"]["selector"], labels))

    # Scraping: annotations for plain Prometheus, a ServiceMonitor for the Operator.
    ann = pod["metadata"].get("annotations", {})
    r.check("scrape annotations name the metrics port and /metrics",
            ann.get("prometheus.io/scrape") == "true"
            and ann.get("prometheus.io/port") == str(ports["metrics"])
            and ann.get("prometheus.io/path", "/metrics") == "/metrics", ann)
    r.check("ServiceMonitor selects the Service",
            matches(smon["spec"]["selector"]["matchLabels"], svc["metadata"].get("labels", {})))
    endpoints = smon["spec"].get("endpoints", [])
    ep_ports = [e.get("port") for e in endpoints]
    r.check("ServiceMonitor scrapes the Service's metrics port at /metrics",
            ep_ports == ["metrics"] and endpoints[0].get("path", "/metrics") == "/metrics"
            and service_ports["metrics"]["targetPort"] in ("metrics", ports["metrics"]),
            endpoints)

    # Autoscaler and disruption budget.
    target = hpa["spec"]["scaleTargetRef"]
    r.check("HorizontalPodAutoscaler targets the Deployment",
            target == {"apiVersion": "apps/v1", "kind": "Deployment",
                       "name": dep["metadata"]["name"]}, target)
    cpu = [m for m in hpa["spec"].get("metrics", [])
           if m.get("type") == "Resource" and m["resource"]["name"] == "cpu"
           and m["resource"]["target"].get("type") == "Utilization"]
    r.check("HorizontalPodAutoscaler scales on CPU utilisation", len(cpu) == 1, hpa["spec"])
    r.check("every container requests CPU (utilisation is measured against it)",
            all("cpu" in c.get("resources", {}).get("requests", {})
                for c in pod_spec["containers"]))
    lo, hi = hpa["spec"].get("minReplicas", 1), hpa["spec"]["maxReplicas"]
    r.check("autoscaler keeps at least 2 replicas", 2 <= lo <= hi, (lo, hi))
    r.check("the Deployment leaves the replica count to the autoscaler",
            "replicas" not in dep["spec"], dep["spec"].get("replicas"))
    r.check("PodDisruptionBudget selects the pods", matches(pdb["spec"]["selector"]["matchLabels"],
                                                            labels))
    spec = pdb["spec"]
    if "maxUnavailable" in spec:
        serving = lo - int(spec["maxUnavailable"])
    else:
        serving = int(spec.get("minAvailable", 0))
    r.check("a disruption leaves at least one replica serving and can evict one",
            1 <= serving < lo, spec)

    # Network: who may connect to which port.
    r.check("NetworkPolicy selects the pods",
            matches(netpol["spec"]["podSelector"]["matchLabels"], labels))
    r.check("NetworkPolicy restricts ingress", "Ingress" in netpol["spec"].get("policyTypes", []))
    rules_by_port = {}
    for rule in netpol["spec"].get("ingress", []):
        for p in rule.get("ports", []):
            name = p["port"] if isinstance(p["port"], str) else \
                {v: k for k, v in ports.items()}.get(p["port"], p["port"])
            rules_by_port.setdefault(name, []).append(rule.get("from"))
    r.check("NetworkPolicy admits both container ports", set(rules_by_port) == set(ports),
            rules_by_port)
    r.check("every ingress rule names its peers (none open to all)",
            all(peers for rs in rules_by_port.values() for peers in rs), rules_by_port)
    grpc_peers = [p for peers in rules_by_port.get("grpc", []) for p in peers or []]
    r.check("gRPC ingress from the namespace's pods",
            any(p.get("podSelector") is not None and "namespaceSelector" not in p
                for p in grpc_peers), grpc_peers)
    metric_peers = [p for peers in rules_by_port.get("metrics", []) for p in peers or []]
    r.check("metrics ingress only from Prometheus pods",
            metric_peers and all(
                "ipBlock" not in p and any("prometheus" in str(v).lower() for v in
                                           p.get("podSelector", {}).get("matchLabels", {}).values())
                for p in metric_peers), metric_peers)

    # Non-root, read-only root filesystem, the Dockerfile's user.
    user = re.search(r"^USER (\d+)(?::(\d+))?\s*$", dockerfile, re.M)
    psc, csc = pod_spec.get("securityContext", {}), container.get("securityContext", {})
    r.check("Dockerfile runs as a numeric non-root USER", user and int(user.group(1)) != 0,
            user and user.group(0))
    uid = int(user.group(1)) if user else None
    r.check("pod and container run as non-root with the Dockerfile's uid",
            psc.get("runAsNonRoot") is True and csc.get("runAsNonRoot") is True
            and psc.get("runAsUser", csc.get("runAsUser")) == uid
            and csc.get("runAsUser", uid) == uid, (psc, csc))
    r.check("read-only root filesystem, no privilege escalation, no capabilities",
            csc.get("readOnlyRootFilesystem") is True
            and csc.get("allowPrivilegeEscalation") is False
            and csc.get("capabilities", {}).get("drop") == ["ALL"], csc)
    r.check("no service account token mounted", pod_spec.get("automountServiceAccountToken")
            is False)
    mounts = [m for c in pod_spec["containers"] for m in c.get("volumeMounts", [])]
    r.check("every volume is mounted read-only (nothing is written at run time)",
            all(m.get("readOnly") is True for m in mounts), mounts)

    # Shutdown: endpoints drop the pod (preStop), then the server drains.
    pre = container.get("lifecycle", {}).get("preStop", {}).get("exec", {}).get("command", [])
    pre_s = float(pre[-1]) if pre and pre[0].endswith("sleep") else 0.0
    drain = seconds_of(flag_value(args, "drain_timeout") or "10s")
    grace = pod_spec.get("terminationGracePeriodSeconds", 30)
    r.check("terminationGracePeriodSeconds covers preStop + --drain_timeout",
            drain is not None and grace > pre_s + drain, (grace, pre_s, drain))
    return container, drain


def check_dashboard(r, path, scrape, work):
    with open(path) as f:
        dash = json.load(f)
    panels = []
    for p in dash.get("panels", []):
        panels.append(p)
        panels.extend(p.get("panels", []))
    ids = [p["id"] for p in panels]
    r.check("dashboard panel ids are unique", len(ids) == len(set(ids)), ids)
    graphs = [p for p in panels if p.get("type") != "row"]
    exprs = [(p["title"], t.get("expr", "")) for p in graphs for t in p.get("targets", [])]
    r.check("every dashboard panel has a PromQL query",
            graphs and all(p.get("targets") for p in graphs)
            and all(e.strip() for _, e in exprs), [p["title"] for p in graphs])
    variables = {v["name"]: v for v in dash.get("templating", {}).get("list", [])}
    r.check("panels use the dashboard's Prometheus data source variable",
            variables.get("datasource", {}).get("type") == "datasource"
            and all(p.get("datasource", {}).get("uid") == "${datasource}" for p in graphs))
    ok, out = promtool_parses([e for _, e in exprs], work)
    r.check("dashboard queries parse (promtool)", ok, out)
    var_queries = []
    for v in variables.values():
        if v.get("type") == "query":
            q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
            m = re.match(r"label_values\((.+),\s*([A-Za-z_]+)\)$", q.strip())
            if m:
                var_queries.append(m.group(1))
    check_queries(r, "dashboard queries", [e for _, e in exprs] + var_queries, scrape)

    def panel_has(pattern):
        return [t for t, e in exprs if re.search(pattern, e)]
    wanted = {
        "RPC rate by method": r"sum by \(grpc_method\) \(rate\(grpc_server_handled_total",
        "errors by code": r"sum by \(grpc_code\) \(rate\(grpc_server_handled_total\{[^}]*"
                          r"grpc_code!=\"OK\"",
        "latency p50 per method": r"histogram_quantile\(0\.5, sum by \(le, grpc_method\) "
                                  r"\(rate\(grpc_server_handling_seconds_bucket",
        "latency p99 per method": r"histogram_quantile\(0\.99, sum by \(le, grpc_method\) "
                                  r"\(rate\(grpc_server_handling_seconds_bucket",
        "catalogue entries by kind": r"by \(kind\) \(capplan_catalog_entries",
        "reload status": r"capplan_catalog_reloads_total",
        "lint findings by code": r"by \(code\) \(capplan_lint_findings",
    }
    missing = [w for w, pattern in wanted.items() if not panel_has(pattern)]
    r.check("dashboard shows RPC rate, errors by code, p50/p99 per method, catalogue "
            "entries, reloads and lint findings", not missing, missing)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--deploy-dir", required=True)
    parser.add_argument("--server", required=True)
    parser.add_argument("--cli", required=True)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--proto-dir", help="default: proto/ beside --deploy-dir")
    args = parser.parse_args()
    args.proto_dir = args.proto_dir or os.path.join(args.deploy_dir, "..", "proto")
    missing = [f"program {p} ({pkg})" for p, pkg in REQUIRED_PROGRAMS if shutil.which(p) is None]
    for flag, path in (("--server", args.server), ("--cli", args.cli)):
        if not os.access(path, os.X_OK):
            missing.append(f"{flag} {path} (not an executable; build it first)")
    if missing:
        print("FAIL deploy checks cannot run; missing: " + "; ".join(missing))
        print("0 passed, 1 failed")
        return 1
    r = Results()
    work = tempfile.mkdtemp(prefix="capplan-deploy-")
    try:
        run(r, args, work)
    except Exception as e:  # report, then fail the run
        r.check("deploy checks ran without an exception", False, repr(e))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{r.passed} passed, {r.failed} failed")
    return 0 if r.failed == 0 and r.passed > 0 else 1


def run(r, args, work):
    prom = os.path.join(args.deploy_dir, "prometheus")
    for cmd in (["promtool", "check", "rules", "capplan-rules.yml"],
                ["promtool", "test", "rules", "capplan-rules_test.yml"]):
        p = subprocess.run(cmd, cwd=prom, capture_output=True, text=True, timeout=60)
        r.check(" ".join(cmd), p.returncode == 0, p.stdout + p.stderr)
    with open(os.path.join(args.proto_dir, "capplan", "v1", "planner.proto")) as f:
        proto_text = f.read()
    rules = check_rules(r, prom, proto_text)

    known = server_flags(args.server)
    r.check("capplan-server --helpfull lists its flags",
            {"listen", "metrics_listen", "data_dir", "drain_timeout"} <= known, sorted(known))

    with open(os.path.join(args.deploy_dir, "Dockerfile")) as f:
        dockerfile = f.read()
    cmd = re.search(r'^CMD \[(.*)\]$', dockerfile, re.M)
    docker_args = re.findall(r'"([^"]+)"', cmd.group(1)) if cmd else []
    unknown = [f for f in flags_in(docker_args) if f not in known]
    r.check("Dockerfile CMD uses only real server flags", docker_args and not unknown, unknown)
    runtime = re.findall(r"FROM debian:12-slim\nRUN apt-get update && .*?install -y "
                         r"--no-install-recommends \\\n(.*?)&& rm", dockerfile, re.S)
    packages = runtime[0].replace("\\", " ").split() if runtime else []
    absent = []
    for pkg in packages:
        p = subprocess.run(["apt-cache", "show", pkg], capture_output=True, text=True, timeout=60)
        if p.returncode != 0 or not p.stdout.strip():
            absent.append(pkg)
    r.check("Dockerfile runtime packages exist in Debian's index", packages and not absent,
            absent or "no packages found")

    with open(os.path.join(args.deploy_dir, "kubernetes", "capplan.yaml")) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    checked = check_manifest(r, docs, known, dockerfile)
    if checked is None:
        return
    container, drain = checked

    scrape = scrape_server(r, args.server, args.cli, args.data_dir, container["args"], drain)
    exported = {"grpc_server_started_total", "grpc_server_handled_total",
                "grpc_server_handling_seconds_bucket", "capplan_catalog_entries",
                "capplan_catalog_reloads_total", "capplan_build_info", "capplan_lint_findings"}
    r.check("the scrape holds the server's metric families", exported <= set(scrape),
            sorted(exported - set(scrape)))

    recorded = {rule["record"] for g in rules["groups"] for rule in g["rules"] if "record" in rule}
    rule_exprs = [rule["expr"] for g in rules["groups"] for rule in g["rules"]]
    check_queries(r, "Prometheus rules", rule_exprs, scrape, extra_metrics=recorded)
    check_dashboard(r, os.path.join(args.deploy_dir, "grafana", "capplan-dashboard.json"),
                    scrape, work)


if __name__ == "__main__":
    sys.exit(main())
