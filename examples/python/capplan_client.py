"""A small Python client for capplan-server (gRPC service capplan.v1.CapacityPlanner).

Copy this file next to your own code. It needs two things:

* grpcio and protobuf for Python. On Debian 12: ``apt-get install python3-grpcio
  python3-protobuf`` and run your script with ``/usr/bin/python3`` (Debian's packages
  are not visible to another ``python3`` that may come first on PATH).
* The Python message classes generated from ``proto/capplan/v1/*.proto``. The CMake
  build writes them to ``<build>/python/capplan/v1/{catalog,planner}_pb2.py``
  (target ``capplan_python_stubs``, part of the default build). By hand::

      protoc -Iproto --python_out=OUT proto/capplan/v1/catalog.proto \\
          proto/capplan/v1/planner.proto

  Use ``protoc`` itself (3.21 handles proto3 ``optional``); Debian's
  ``grpc_tools.protoc`` does not. Only messages are generated: methods are called
  with ``channel.unary_unary``, so no gRPC code generator is involved.

Example::

    import capplan_client

    with capplan_client.CapplanClient("127.0.0.1:50051", stubs_dir="build/python") as c:
        pb = c.pb                                 # the planner_pb2 module
        request = pb.PlanRequest(
            deployment=capplan_client.deployment(pb, model="qwen3-8b",
                                                 gpu="nvidia-l40s-48gb"),
            workload=pb.WorkloadSpec(input_tokens=1000, output_tokens=200),
            slo=pb.Slo(ttft_p95_seconds=1.0, tpot_seconds=0.05),
            target_concurrent_users=200, price_per_gpu_hour=1.2)
        plan = c.plan(request)
        print(plan.sizing.replicas, "replicas")

Units follow the API: memory in bytes, durations in seconds, rates per second,
prices in currency units per GPU-hour. Errors are ``grpc.RpcError`` with the server's
status code (INVALID_ARGUMENT names the request field at fault, NOT_FOUND an unknown id).
"""

import importlib
import os
import sys

SERVICE = "capplan.v1.CapacityPlanner"

# What this module needs besides the standard library, with the Debian package.
REQUIRED_MODULES = (("grpc", "python3-grpcio"), ("google.protobuf", "python3-protobuf"))


class MissingDependency(ImportError):
    """grpcio, protobuf or the generated messages are not importable."""


def check_dependencies():
    """Raises MissingDependency naming every missing module and its Debian package."""
    missing = []
    for module, package in REQUIRED_MODULES:
        try:
            importlib.import_module(module)
        except ImportError:
            missing.append(f"Python module {module} ({package})")
    if missing:
        raise MissingDependency(
            "missing: " + "; ".join(missing) + f" [interpreter {sys.executable}; Debian's "
            "packages are visible to /usr/bin/python3]")


def load_messages(stubs_dir):
    """Imports capplan.v1.planner_pb2 from stubs_dir (the folder holding capplan/v1/)."""
    check_dependencies()
    marker = os.path.join(stubs_dir, "capplan", "v1", "planner_pb2.py")
    if not os.path.isfile(marker):
        raise MissingDependency(
            f"no generated messages at {marker}: build the target capplan_python_stubs "
            "(cmake --build build --target capplan_python_stubs) or run protoc --python_out")
    stubs_dir = os.path.abspath(stubs_dir)
    if stubs_dir not in sys.path:
        sys.path.insert(0, stubs_dir)
    return importlib.import_module("capplan.v1.planner_pb2")


def deployment(pb, model=None, gpu=None, gpus=None, baseline=None, tp=None,
               max_model_len=None, engine=None, engine_version=None):
    """A capplan.v1.Deployment from the usual knobs; None leaves a field unset.

    model: a catalogue id or a Hugging Face repo id; gpu: a catalogue hardware id;
    baseline: start from a measured baseline's configuration (other fields override it);
    engine: "vllm", "sglang" or "trtllm" (None = the baseline's or the default engine).
    """
    d = pb.Deployment()
    if baseline:
        d.baseline_id = baseline
    if model:
        d.model_id = model
    if gpu:
        d.hardware_id = gpu
    if gpus is not None:
        d.gpu_count = gpus
    if tp is not None:
        d.parallelism.tp = tp
    if max_model_len is not None:
        d.engine.max_model_len = max_model_len
    if engine:
        kinds = d.engine.DESCRIPTOR.fields_by_name["kind"].enum_type.values_by_name
        d.engine.kind = kinds["ENGINE_KIND_" + engine.upper()].number
    if engine_version:
        d.engine.version = engine_version
    return d


class CapplanClient:
    """One channel to a capplan-server; one Python method per RPC.

    ``plan``, ``validate``, ``predict_load`` and ``plan_memory`` are spelled out; every
    RPC of the service is also reachable as ``call("ListHardware", request)``. Each call
    has a deadline (``timeout`` seconds, default 30).
    """

    def __init__(self, target, stubs_dir, timeout=30.0, channel=None):
        self.pb = load_messages(stubs_dir)
        import grpc  # checked by load_messages
        from google.protobuf import symbol_database

        self._grpc = grpc
        self.target = target
        self.timeout = timeout
        self._channel = channel or grpc.insecure_channel(target)
        self._owns_channel = channel is None
        service = self.pb.DESCRIPTOR.services_by_name["CapacityPlanner"]
        db = symbol_database.Default()
        self._methods = {}
        for method in service.methods:
            response_class = db.GetSymbol(method.output_type.full_name)
            self._methods[method.name] = (
                db.GetSymbol(method.input_type.full_name),
                self._channel.unary_unary(
                    f"/{SERVICE}/{method.name}",
                    request_serializer=lambda m: m.SerializeToString(),
                    response_deserializer=response_class.FromString))

    # -- connection

    def wait_ready(self, timeout=10.0):
        """Blocks until the channel connects; grpc.FutureTimeoutError after timeout s."""
        self._grpc.channel_ready_future(self._channel).result(timeout=timeout)

    def close(self):
        if self._owns_channel:
            self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- RPCs

    def methods(self):
        """The service's RPC names, as the server's proto declares them."""
        return sorted(self._methods)

    def call(self, method, request, timeout=None, metadata=None):
        """Calls RPC `method` with `request` (a message of its request type).

        metadata: extra gRPC metadata, e.g. [("authorization", "Bearer TOKEN")] for
        PutBaseline on a server started with --write_token_file.
        """
        request_class, stub = self._methods[method]
        if not isinstance(request, request_class):
            raise TypeError(f"{method} takes a {request_class.DESCRIPTOR.full_name}, "
                            f"not a {type(request).__name__}")
        return stub(request, timeout=self.timeout if timeout is None else timeout,
                    metadata=metadata)

    def plan(self, request, **kw):
        """PlanRequest -> PlanResponse: safe operating point, capacity, sizing, cost."""
        return self.call("Plan", request, **kw)

    def validate(self, request, **kw):
        """ValidateRequest -> ValidateResponse: verdict, findings, the checks run."""
        return self.call("Validate", request, **kw)

    def predict_load(self, request, **kw):
        """PredictLoadRequest -> LoadCurve: throughput and latency against load."""
        return self.call("PredictLoad", request, **kw)

    def plan_memory(self, request, **kw):
        """PlanMemoryRequest -> MemoryPlan: per-GPU memory account and KV pool."""
        return self.call("PlanMemory", request, **kw)


# -- readable names for the API's enums


def enum_short_name(pb, enum_name, value):
    """LOAD_BINDING_TPOT -> "TPOT", for any enum of planner.proto or catalog.proto."""
    enum = pb.DESCRIPTOR.enum_types_by_name.get(enum_name)
    if enum is None:
        from google.protobuf import symbol_database  # catalog.proto's enums

        enum = symbol_database.Default().pool.FindEnumTypeByName("capplan.v1." + enum_name)
    name = enum.values_by_number[value].name if value in enum.values_by_number else str(value)
    prefix = "".join("_" + c if c.isupper() else c for c in enum_name).lstrip("_").upper() + "_"
    return name[len(prefix):] if name.startswith(prefix) else name
