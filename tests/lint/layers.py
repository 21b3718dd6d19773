#!/usr/bin/env python3
"""The layers of docs/architecture.md, enforced.

Each folder of the product's code (a top-level folder, or one folder below
agent/ or collectors/) may include only from itself and from the folders
LAYERS lists for it; anything else fails, naming the file, the line and the
edge. LAYERS itself must stay a partial order (no cycle), so a new back edge
is a decision made here, in review, not an accident in a header.

Two more checks:
  * each library target exposes only its own include root (PUBLIC include
    directories of a CMakeLists.txt in folder F: F or its parent, so callers
    write "F/x.h"; core alone exposes include/);
  * the checker itself fails on planted back edges (run first, every time).

  tests/lint/layers.py [REPO_ROOT]
"""
import os
import re
import sys

# Folder -> the folders it may include from (besides itself). Lower layers
# first; docs/architecture.md draws the same table.
LAYERS = {
    "include": set(),
    "core": {"include"},
    "kube": {"include", "core"},
    "exposition": {"include", "core"},
    "collectors/bpf_common": {"include", "core", "kube"},
    "collectors/procnet": {"include", "core", "kube", "exposition"},
    # node's interface counters reuse procnet's /proc/net/dev parser.
    "collectors/node": {"include", "core", "kube", "exposition", "collectors/procnet"},
    "collectors/cgroup": {"include", "core", "kube", "exposition"},
    "collectors/gpu": {"include", "core", "kube", "exposition"},
    "collectors/flows": {"include", "core", "kube", "exposition", "collectors/bpf_common"},
    "collectors/profiler": {"include", "core", "kube", "exposition", "collectors/bpf_common"},
    "agent/discovery": {"include", "core", "kube"},
    "agent/diagnosis": {"include", "core", "kube"},
    "agent/report_page": {"include", "core", "agent/diagnosis"},
    "agent/report": {"include", "core", "kube", "agent/diagnosis", "agent/report_page"},
    "agent/sampling": {"include", "core"},
    # The HTTP front serves the report page with the page's own
    # Content-Security-Policy.
    "agent/http": {"include", "core", "agent/report_page"},
    "agent/exporter": {
        "include", "core", "kube", "exposition", "agent/discovery",
        "agent/diagnosis", "agent/sampling", "agent/http",
    },
    # The daemon wires everything below it, every collector included (the
    # registry).
    "agent": {
        "include", "core", "kube", "exposition", "collectors/*",
        "agent/discovery", "agent/diagnosis", "agent/report_page",
        "agent/report", "agent/sampling", "agent/http", "agent/exporter",
    },
    # The CLI: the report, the cluster view's diagnosis and capture files;
    # no collector, BPF, NVML or HTTP server.
    "agent/cli": {
        "include", "core", "kube", "agent/diagnosis", "agent/report_page",
        "agent/report", "collectors/flows",
    },
}

# A collector folder not listed above (a new collector) sits in the
# collectors' layer: adding one stays one folder and one registry line.
COLLECTOR_DEFAULT = {"include", "core", "kube", "exposition"}

PRODUCT_ROOTS = ("include", "core", "kube", "exposition", "collectors", "agent")
# Where a quoted include is looked up, after the including file's folder:
# the include roots the libraries expose.
INCLUDE_ROOTS = ("include", "", "agent", "collectors")
SOURCE_SUFFIXES = (".h", ".cc", ".c")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def unit_of(path):
    parts = path.split("/")
    if parts[0] in ("agent", "collectors") and len(parts) > 2:
        return "/".join(parts[:2])
    return parts[0]


def product_files(root):
    for top in PRODUCT_ROOTS:
        for folder, _, names in os.walk(os.path.join(root, top)):
            for name in names:
                if name.endswith(SOURCE_SUFFIXES):
                    full = os.path.join(folder, name)
                    yield os.path.relpath(full, root)


def resolve(including, header, exists):
    """The repository path a quoted include names, or None (a generated
    header: version.h, a BPF skeleton, protobuf output)."""
    candidates = [os.path.join(os.path.dirname(including), header)]
    candidates += [os.path.join(r, header) for r in INCLUDE_ROOTS]
    for c in candidates:
        c = os.path.normpath(c)
        if exists(c):
            return c
    return None


def allowed_from(unit):
    if unit in LAYERS:
        return LAYERS[unit]
    if unit.startswith("collectors/"):
        return COLLECTOR_DEFAULT
    return None


def admits(allowed, unit):
    return unit in allowed or ("collectors/*" in allowed and
                               unit.startswith("collectors/"))


def include_violations(files, read, exists):
    problems = []
    for path in files:
        own = unit_of(path)
        allowed = allowed_from(own)
        if allowed is None:
            problems.append(f"{path}: folder {own} is not in LAYERS "
                            "(tests/lint/layers.py): place it in a layer")
            continue
        for number, line in enumerate(read(path).splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            target = resolve(path, m.group(1), exists)
            if target is None:
                continue
            other = unit_of(target)
            if other != own and not admits(allowed, other):
                problems.append(
                    f"{path}:{number}: includes {target} ({own} -> {other}); "
                    f"{own} may include only from "
                    f"{', '.join(sorted(allowed)) or 'itself'}")
    return problems


def expanded(allowed):
    if "collectors/*" not in allowed:
        return set(allowed)
    return (set(allowed) - {"collectors/*"}) | {
        u for u in LAYERS if u.startswith("collectors/")}


def layer_cycles():
    """A cycle in LAYERS, as a list of folders, or None."""
    state = {}

    def visit(unit, path):
        state[unit] = "open"
        for below in sorted(expanded(LAYERS.get(unit, ()))):
            if below not in LAYERS:
                return [unit, below + " (not in LAYERS)"]
            if state.get(below) == "open":
                return path + [unit, below]
            if below not in state:
                found = visit(below, path + [unit])
                if found:
                    return found
        state[unit] = "done"
        return None

    for unit in sorted(LAYERS):
        if unit not in state:
            found = visit(unit, [])
            if found:
                return found
    return None


TARGET_INCLUDES = re.compile(
    r"target_include_directories\(\s*(\S+)\s+(.*?)\)", re.S)


def include_root_violations(root):
    problems = []
    for top in PRODUCT_ROOTS:
        for folder, _, names in os.walk(os.path.join(root, top)):
            if "CMakeLists.txt" not in names:
                continue
            rel = os.path.relpath(folder, root)
            text = open(os.path.join(folder, "CMakeLists.txt")).read()
            for target, args in TARGET_INCLUDES.findall(text):
                scope = None
                for word in args.split():
                    if word in ("PUBLIC", "PRIVATE", "INTERFACE"):
                        scope = word
                        continue
                    if scope == "PRIVATE" or "BINARY_DIR" in word:
                        continue
                    exposed = (word.replace("${CMAKE_CURRENT_SOURCE_DIR}", rel)
                               .replace("${CMAKE_SOURCE_DIR}/", "")
                               .replace("${CMAKE_SOURCE_DIR}", "."))
                    exposed = os.path.normpath(exposed)
                    allowed = {rel, os.path.dirname(rel) or "."}
                    if rel == "core":
                        allowed.add("include")
                    if exposed not in allowed:
                        problems.append(
                            f"{rel}/CMakeLists.txt: {target} exposes {exposed}; "
                            f"a library exposes only its own root "
                            f"({' or '.join(sorted(allowed))})")
    return problems


def planted_edges_fail(read, exists):
    """The checker must catch a back edge: plant two and expect both."""
    planted = {
        "collectors/cgroup/planted.cc": '#include "http/server.h"\n',
        "kube/planted.h": '#include "exposition/export_context.h"\n',
        "collectors/newcollector/planted.cc": '#include "sampling/history.h"\n',
    }

    def planted_read(path):
        return planted[path] if path in planted else read(path)

    found = include_violations(list(planted), planted_read, exists)
    return len(found) == len(planted), found


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), "..", ".."))

    def exists(rel):
        return os.path.isfile(os.path.join(root, rel))

    def read(rel):
        with open(os.path.join(root, rel), errors="replace") as f:
            return f.read()

    files = sorted(product_files(root))
    caught, found = planted_edges_fail(read, exists)
    if not caught:
        print("layers: the checker missed a planted back edge:", found)
        return 1
    problems = []
    cycle = layer_cycles()
    if cycle:
        problems.append("LAYERS has a cycle: " + " -> ".join(cycle))
    problems += include_violations(files, read, exists)
    problems += include_root_violations(root)
    for p in problems:
        print("layers:", p)
    if problems:
        print(f"layers: {len(problems)} problem(s); docs/architecture.md "
              "says which folder may include which")
        return 1
    edges = sum(len(expanded(v)) for v in LAYERS.values())
    print(f"layers: {len(files)} files in {len(LAYERS)} folders keep to "
          f"{edges} allowed edges; planted back edges caught")
    return 0


if __name__ == "__main__":
    sys.exit(main())
