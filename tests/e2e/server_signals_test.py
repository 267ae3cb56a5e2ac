#!/usr/bin/env python3
"""The built capplan-server against the data directories that used to hang or
crash it, and its signals around a failed reload:

- a FIFO in the data folder, a symbolic link to /dev/zero, an empty folder:
  the server refuses to start (exit 1, the file or the rule named) within a
  bound instead of hanging, aborting with bad_alloc or serving nothing;
- a FIFO added after start-up: SIGHUP's reload fails and is reported, the
  last good catalogue keeps serving (the metrics say so), and SIGTERM still
  stops the server with exit 0.

Usage: server_signals_test.py --server BIN --data-dir DIR
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

BOUND_SECONDS = 20


class Results:
    def __init__(self):
        self.failed = 0

    def check(self, name, condition, detail=""):
        print(("PASS " if condition else "FAIL ") + name + ("" if condition else f" {detail}"))
        self.failed += 0 if condition else 1


def run_refused(binary, data_dir):
    """Runs the server on `data_dir`; (exit code, stderr), or (None, '') if it hung."""
    proc = subprocess.Popen([binary, "--listen=127.0.0.1:0", "--metrics_listen=",
                             f"--data_dir={data_dir}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _, err = proc.communicate(timeout=BOUND_SECONDS)
        return proc.returncode, err
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return None, ""


def start(binary, data_dir):
    proc = subprocess.Popen([binary, "--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0",
                             f"--data_dir={data_dir}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 30
    while time.time() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        m = re.search(r"metrics on http://(\S+)/metrics", line)
        if m:
            return proc, m.group(1)
    proc.kill()
    raise RuntimeError("server did not start: " + proc.communicate()[1])


def gauge(metrics_address, name):
    text = urllib.request.urlopen(f"http://{metrics_address}/metrics", timeout=10).read().decode()
    m = re.search(rf"^{name} (\S+)$", text, re.M)
    return float(m.group(1)) if m else None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--data-dir", required=True)
    args = parser.parse_args()
    if not os.access(args.server, os.X_OK):
        print(f"missing: --server {args.server} (build it first)")
        return 1
    r = Results()
    with tempfile.TemporaryDirectory() as work:
        def copy(name):
            path = os.path.join(work, name)
            shutil.copytree(args.data_dir, path)
            return path

        fifo_dir = copy("fifo")
        os.mkfifo(os.path.join(fifo_dir, "baselines", "pipe.txtpb"))
        code, err = run_refused(args.server, fifo_dir)
        r.check("a FIFO in the data folder: start refused, no hang",
                code == 1 and "pipe.txtpb: is a FIFO" in err, f"code={code} err={err[-300:]}")

        zero_dir = copy("zero")
        os.symlink("/dev/zero", os.path.join(zero_dir, "models", "zero.txtpb"))
        code, err = run_refused(args.server, zero_dir)
        r.check("a symlink to /dev/zero: start refused, no bad_alloc",
                code == 1 and "resolves to /dev/zero, outside the directory" in err,
                f"code={code} err={err[-300:]}")

        empty_dir = os.path.join(work, "empty")
        os.makedirs(empty_dir)
        code, err = run_refused(args.server, empty_dir)
        r.check("an empty folder: start refused, not SERVING with 0 entries",
                code == 1 and "holds 0 hardware and 0 model entries" in err,
                f"code={code} err={err[-300:]}")

        live_dir = copy("live")
        proc, metrics = start(args.server, live_dir)
        try:
            r.check("the last reload succeeded after start",
                    gauge(metrics, "capplan_catalog_last_reload_success") == 1)
            os.mkfifo(os.path.join(live_dir, "hardware", "pipe.txtpb"))
            proc.send_signal(signal.SIGHUP)
            deadline = time.time() + BOUND_SECONDS
            value = None
            while time.time() < deadline:
                value = gauge(metrics, "capplan_catalog_last_reload_success")
                if value == 0:
                    break
                time.sleep(0.1)
            r.check("SIGHUP with a FIFO: the reload fails and the gauge says so", value == 0,
                    f"gauge={value}")
            proc.send_signal(signal.SIGTERM)
            try:
                code = proc.wait(timeout=BOUND_SECONDS)
            except subprocess.TimeoutExpired:
                code = None
            r.check("SIGTERM after the failed reload: exit 0", code == 0, f"code={code}")
        finally:
            if proc.poll() is None:
                proc.kill()
            err = proc.communicate()[1]
        r.check("the failed reload is logged naming the file",
                "reload failed" in err and "pipe.txtpb: is a FIFO" in err, err[-300:])
    print(f"{r.failed} failed")
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main())
