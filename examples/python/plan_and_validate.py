#!/usr/bin/python3
"""Size a deployment with capplan-server's Plan, then check it with Validate.

    /usr/bin/python3 examples/python/plan_and_validate.py --server 127.0.0.1:50051 \\
        --stubs build/python --model qwen3-8b --gpu nvidia-l40s-48gb \\
        --input-tokens 1000 --output-tokens 200 --ttft-p95 1 --tpot 0.05 \\
        --target-users 200 --price-per-gpu-hour 1.2 --expected-users 40

Plan answers how much load one replica carries under the SLO, the capacity that gives
per second and per month, how many replicas the target needs and what an output token
costs. Validate checks the same deployment at the load you expect one replica to carry
(--expected-users or --expected-rps) and gives a verdict with its findings.

Exit codes, as the capplan CLI: 0 PASS, 1 Validate said FAIL, 2 invalid input, a missing
dependency or an unreachable server (the reason goes to stderr).
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import capplan_client  # noqa: E402  (beside this script)

GIB = float(1 << 30)


def scaled(v):
    """16886833625.8 -> '16.887 billion'; 2.8e6 -> '2.800 million'; 512 -> '512'."""
    if v >= 1e9:
        return f"{v / 1e9:.3f} billion"
    if v >= 1e6:
        return f"{v / 1e6:.3f} million"
    return f"{v:,.0f}"


def seconds(present, v, digits=3):
    return f"{v:.{digits}f} s" if present else "- s"


def figure(key, value):
    """A Finding's figure with the unit its key names (the API puts units in keys)."""
    if key.endswith("_bytes"):
        return f"{key[:-6]} {value / GIB:.2f} GiB"
    for suffix, unit in (("_seconds", "s"), ("_tokens", "tokens"), ("_rps", "req/s"),
                         ("_users", "users")):
        if key.endswith(suffix):
            return f"{key[:-len(suffix)]} {value:g} {unit}"
    if key == "utilization":
        return f"utilization {100 * value:.1f} %"
    return f"{key} {value:g}"


def print_point(pb, title, p, out):
    if not p.found:
        why = capplan_client.enum_short_name(pb, "LoadBinding", p.binding)
        print(f"  {title}: none meets the SLO (limit: {why})", file=out)
        return
    users = f"{p.concurrent_users} users, " if p.HasField("concurrent_users") else ""
    print(f"  {title}: {users}{p.requests_per_second:.3f} req/s, "
          f"{p.output_tokens_per_second:.1f} output tok/s; TTFT p50 "
          f"{seconds(p.HasField('ttft_p50_seconds'), p.ttft_p50_seconds)}, p95 "
          f"{seconds(p.HasField('ttft_p95_seconds'), p.ttft_p95_seconds)}, p99 "
          f"{seconds(p.HasField('ttft_p99_seconds'), p.ttft_p99_seconds)}; TPOT "
          f"{seconds(p.HasField('tpot_seconds'), p.tpot_seconds, 4)} (limit: "
          f"{capplan_client.enum_short_name(pb, 'LoadBinding', p.binding)})", file=out)


def print_capacity(title, c, out):
    print(f"  {title}: {c.tokens_per_second_total:.1f} tok/s in+out, "
          f"{c.output_tokens_per_second:.1f} output tok/s; "
          f"{scaled(c.tokens_per_month_total)} tokens/month in+out, "
          f"{scaled(c.output_tokens_per_month)} output tokens/month "
          f"({c.days_per_month:g}-day month, duty factor {100 * c.duty_factor:.0f} %)", file=out)


def print_deployment(pb, m, out):
    d = m.deployment
    engine = f"{capplan_client.enum_short_name(pb, 'EngineKind', d.engine).lower()}"
    if d.engine_version:
        engine += " " + d.engine_version
    if m.provenance.engine_preset_id:
        engine += f" (preset {m.provenance.engine_preset_id})"
    print(f"  deployment: {d.model_id or '(config.json)'} on {d.gpu_count} x {d.hardware_id}, "
          f"tp {d.tp}, {engine}, max_model_len {d.max_model_len} tokens", file=out)
    g = m.per_gpu
    print(f"  memory: fits {'yes' if m.fits else 'NO'}; {g.used_bytes / GIB:.2f} GiB used of "
          f"{g.capacity_bytes / GIB:.2f} GiB per GPU ({g.weights_bytes / GIB:.2f} GiB weights, "
          f"{g.kv_pool_bytes / GIB:.2f} GiB KV pool); KV pool {m.kv_pool_tokens:,} tokens",
          file=out)


def print_plan(pb, args, plan, out):
    print(f"PLAN on {args.server}", file=out)
    print_deployment(pb, plan.memory, out)
    print(f"  workload: {args.input_tokens:g} input + {args.output_tokens:g} output tokens per "
          "request", file=out)
    limits = [f"{name} <= {value:.3f} s" for name, value in (
        ("TTFT p95", args.ttft_p95), ("TPOT", args.tpot), ("end-to-end p95", args.e2e_p95))
        if value is not None]
    print("  SLO: " + (", ".join(limits) or "none"), file=out)
    print_point(pb, "safe point, closed loop", plan.safe_closed_loop, out)
    print_point(pb, "safe point, open loop", plan.safe_open_loop, out)
    print_capacity("capacity at the safe point", plan.capacity, out)
    print_capacity("capacity at PEAK (not a promise)", plan.capacity_at_peak, out)
    if plan.HasField("sizing"):
        s = plan.sizing
        print(f"  sizing for {s.target}: {s.replicas} replicas, {s.gpus} GPUs "
              f"({s.safe_load_per_replica:g} {s.unit} per replica)", file=out)
    if plan.HasField("cost_per_million_output_tokens"):
        print(f"  cost: {plan.cost_per_million_output_tokens:.4f} {args.currency} per million "
              f"output tokens (at {args.price_per_gpu_hour:g} {args.currency} per GPU-hour)",
              file=out)
    for p in plan.provenance:
        print(f"  {p.metric} figures: {capplan_client.enum_short_name(pb, 'Tier', p.tier)}, "
              f"error band ±{100 * p.error_band_fraction:.0f} %, "
              f"{len(p.baseline_ids)} baselines", file=out)


def print_validate(pb, args, answer, out):
    load = (f"{args.expected_users} concurrent users" if args.expected_users is not None
            else f"{args.expected_rps:g} req/s")
    verdict = capplan_client.enum_short_name(pb, "Verdict", answer.verdict)
    print(f"VALIDATE at {load} per replica", file=out)
    print(f"  verdict: {verdict}", file=out)
    for f in answer.findings:
        figures = ", ".join(figure(k, v) for k, v in sorted(f.figures.items()))
        print(f"  finding {capplan_client.enum_short_name(pb, 'Severity', f.severity)} "
              f"{f.code}: {f.message}" + (f" [{figures}]" if figures else ""), file=out)
    for c in answer.checks:
        result = "skipped" if c.skipped else ("pass" if c.passed else "FAIL")
        print(f"  check {result}: {c.name}: {c.detail}", file=out)


def parse_args(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    default_stubs = os.environ.get(
        "CAPPLAN_PYTHON_STUBS", os.path.join(here, "..", "..", "build", "python"))
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--server", default="127.0.0.1:50051",
                   help="capplan-server HOST:PORT (default %(default)s)")
    p.add_argument("--stubs", default=default_stubs,
                   help="folder holding the generated capplan/v1/*_pb2.py "
                        "(default: $CAPPLAN_PYTHON_STUBS or build/python)")
    p.add_argument("--timeout", type=float, default=30,
                   help="deadline per RPC, seconds (default %(default)g)")
    g = p.add_argument_group("deployment")
    g.add_argument("--model", default="qwen3-8b",
                   help="catalogue or Hugging Face model id (default %(default)s)")
    g.add_argument("--gpu", default="nvidia-l40s-48gb",
                   help="catalogue hardware id (default %(default)s)")
    g.add_argument("--gpus", type=int, help="GPUs per replica")
    g.add_argument("--tp", type=int, help="tensor parallel size")
    g.add_argument("--engine", choices=("vllm", "sglang", "trtllm"))
    g.add_argument("--engine-version")
    g.add_argument("--max-model-len", type=int, help="context length, tokens")
    g = p.add_argument_group("workload and SLO")
    g.add_argument("--input-tokens", type=float, default=1000,
                   help="tokens, mean per request (default %(default)g)")
    g.add_argument("--output-tokens", type=float, default=200,
                   help="tokens, mean per request (default %(default)g)")
    g.add_argument("--ttft-p95", type=float, default=1.0,
                   help="seconds (default %(default)g)")
    g.add_argument("--tpot", type=float, default=0.05,
                   help="seconds per output token (default %(default)g)")
    g.add_argument("--e2e-p95", type=float, help="seconds")
    g = p.add_argument_group("Plan: target and price")
    t = g.add_mutually_exclusive_group()
    t.add_argument("--target-users", type=int,
                   help="concurrent users to serve in total (default 200)")
    t.add_argument("--target-rps", type=float, help="requests per second to serve in total")
    g.add_argument("--price-per-gpu-hour", type=float, default=1.2,
                   help="currency units per GPU-hour (default %(default)g)")
    g.add_argument("--currency", default="USD",
                   help="label for the price's unit (default %(default)s)")
    g = p.add_argument_group("Validate: the load one replica is expected to carry")
    e = g.add_mutually_exclusive_group()
    e.add_argument("--expected-users", type=int,
                   help="concurrent users per replica (default 40)")
    e.add_argument("--expected-rps", type=float, help="requests per second per replica")
    args = p.parse_args(argv)
    if args.target_users is None and args.target_rps is None:
        args.target_users = 200
    if args.expected_users is None and args.expected_rps is None:
        args.expected_users = 40
    return args



def main(argv=None, out=sys.stdout):
    args = parse_args(argv)
    try:
        client = capplan_client.CapplanClient(args.server, args.stubs, timeout=args.timeout)
    except capplan_client.MissingDependency as e:
        print(f"plan_and_validate: {e}", file=sys.stderr)
        return 2
    import grpc

    pb = client.pb
    deployment = capplan_client.deployment(
        pb, model=args.model, gpu=args.gpu, gpus=args.gpus, tp=args.tp,
        max_model_len=args.max_model_len, engine=args.engine,
        engine_version=args.engine_version)
    workload = pb.WorkloadSpec(input_tokens=args.input_tokens, output_tokens=args.output_tokens)
    slo = pb.Slo()
    if args.ttft_p95 is not None:
        slo.ttft_p95_seconds = args.ttft_p95
    if args.tpot is not None:
        slo.tpot_seconds = args.tpot
    if args.e2e_p95 is not None:
        slo.e2e_p95_seconds = args.e2e_p95

    plan_request = pb.PlanRequest(deployment=deployment, workload=workload, slo=slo,
                                  price_per_gpu_hour=args.price_per_gpu_hour)
    if args.target_users is not None:
        plan_request.target_concurrent_users = args.target_users
    else:
        plan_request.target_requests_per_second = args.target_rps

    validate_request = pb.ValidateRequest(deployment=deployment, workload=workload, slo=slo)
    if args.expected_users is not None:
        validate_request.expected_load.concurrent_users = args.expected_users
    else:
        validate_request.expected_load.requests_per_second = args.expected_rps

    with client:
        try:
            client.wait_ready(timeout=min(args.timeout, 10))
        except grpc.FutureTimeoutError:
            print(f"plan_and_validate: no capplan-server answers at {args.server}",
                  file=sys.stderr)
            return 2
        try:
            plan = client.plan(plan_request)
            answer = client.validate(validate_request)
        except grpc.RpcError as e:
            print(f"plan_and_validate: {e.code().name}: {e.details()}", file=sys.stderr)
            return 2
    print_plan(pb, args, plan, out)
    print(file=out)
    print_validate(pb, args, answer, out)
    return 0 if answer.verdict == pb.VERDICT_PASS else 1


if __name__ == "__main__":
    sys.exit(main())
