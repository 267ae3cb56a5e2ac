#!/usr/bin/env python3
"""Refuses an #include that runs up or sideways between the rooms.

Rooms, from the top down (a room may include only rooms below it):
  service/cli, service/server -> service/rpc -> service/planner ->
  service/translate -> service/catalog -> model -> base
model/ and base/ may include no protobuf, gRPC or generated code.
Usage: check_layering.py SOURCE_DIR   (exit 1 and one line per violation)
"""
import os
import re
import sys

ORDER = ["base", "model", "service/catalog", "service/translate", "service/planner",
         "service/rpc", "service/server", "service/cli"]
# cli and server are side by side at the top: neither may include the other.
SIDE_BY_SIDE = {("service/cli", "service/server"), ("service/server", "service/cli")}
PURE = {"base", "model"}
FORBIDDEN_IN_PURE = re.compile(r'^(capplan/v1/|google/protobuf/|grpc|prometheus/)')
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def room_of(path):
    best = None
    for room in ORDER:
        if path == room or path.startswith(room + "/"):
            if best is None or len(room) > len(best):
                best = room
    return best


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    problems = []
    for top in ("base", "model", "service"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith((".h", ".cc")):
                    continue
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, root)
                room = room_of(rel)
                if room is None:
                    problems.append(f"{rel}: not inside a room ({', '.join(ORDER)})")
                    continue
                with open(full, encoding="utf-8") as f:
                    for lineno, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        target = m.group(1)
                        if room in PURE and FORBIDDEN_IN_PURE.match(target):
                            problems.append(f"{rel}:{lineno}: {room}/ is pure C++ and may not "
                                            f"include \"{target}\"")
                            continue
                        target_room = room_of(target)
                        if target_room is None or target_room == room:
                            continue
                        if (room, target_room) in SIDE_BY_SIDE or \
                                ORDER.index(target_room) > ORDER.index(room):
                            problems.append(f"{rel}:{lineno}: {room} may not include "
                                            f"\"{target}\" ({target_room} is not below it)")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
