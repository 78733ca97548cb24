#!/usr/bin/env python3
"""Fails on an #include cycle between hyloop's libraries, or on a layer that reaches up.

Issue 23: the libraries are split by concern, each may include only the ones below it:

    core                          the blocks (Eigen only)
    hal         -> core           drivers, emulators, the actuator safety layer
    transport   -> core, hal, proto   frames, rings, CURVE (a frame's layout is hal's)
    runtime     -> core, hal, transport, proto
    experiment  -> core, hal      the framework: Kind, registry, plug-ins, loop parts, fields
    recording   -> experiment     run directory, journal, HDF5/MAT export (SQLite, HDF5, matio)
    jobs        -> experiment     tuning and other jobs over any kind that offers them
    kinds/<k>   -> experiment, jobs, core, hal   (never recording, never another kind)

A library's files are libs/<lib>/{include,src} (kinds/<k>/{include,src} for a kind); its
dependencies are read from `#include "hyloop/<lib>/..."` lines (a kind's own headers are
hyloop/kinds/<k>/...; hyloop/version.hpp is core's, hyloop/<x>.pb.h and hyloop/egm/ are proto).
Also checked: no header-to-header #include cycle inside the scanned tree. Prints every
violation as `LIB -> DEP: FILE:LINE` and exits 1; prints the graph with --graph.

  tools/check_layers.py [--root DIR] [--graph]
"""
import argparse
import pathlib
import re
import sys

INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"(hyloop/[^"]+)"', re.M)
LIBS = ("core", "hal", "transport", "runtime", "experiment", "recording", "jobs")
ALLOWED = {
    "core": set(),
    "hal": {"core"},
    "proto": set(),
    "transport": {"core", "hal", "proto"},
    "runtime": {"core", "hal", "transport", "proto"},
    "experiment": {"core", "hal"},
    "recording": {"core", "hal", "experiment"},
    "jobs": {"core", "hal", "experiment"},
    "kind": {"core", "hal", "experiment", "jobs"},
}


def library_of_include(path):
    """The library an include path "hyloop/..." belongs to ("kinds/<k>" for a kind)."""
    parts = path.split("/")
    if len(parts) == 2:
        return "core" if parts[1] == "version.hpp" else "proto"
    if parts[1] == "kinds" and len(parts) >= 4:
        return "kinds/" + parts[2]
    if parts[1] in LIBS:
        return parts[1]
    return "proto"  # generated protobuf headers (hyloop/egm/egm.pb.h, ...)


def libraries(root):
    """{library: [files]} for libs/<lib> and kinds/<k> (include/ and src/ only, not tests)."""
    out = {}
    for lib in LIBS:
        base = root / "libs" / lib
        out[lib] = [p for d in ("include", "src") for p in sorted((base / d).rglob("*"))
                    if p.suffix in (".hpp", ".cpp", ".h") and p.is_file()]
    for kind in sorted(p for p in (root / "kinds").glob("*") if p.is_dir()):
        out["kinds/" + kind.name] = [
            p for d in ("include", "src") for p in sorted((kind / d).rglob("*"))
            if p.suffix in (".hpp", ".cpp", ".h") and p.is_file()]
    return out


def edges(root, libs):
    """[(lib, dep, file, line)] for every include of another library."""
    out = []
    for lib, files in libs.items():
        for f in files:
            text = f.read_text(errors="replace")
            for m in INCLUDE_RE.finditer(text):
                dep = library_of_include(m.group(1))
                if dep != lib:
                    line = text.count("\n", 0, m.start(1)) + 1
                    out.append((lib, dep, str(f.relative_to(root)), line))
    return out


def layer_violations(found):
    bad = []
    for lib, dep, f, line in found:
        allowed = ALLOWED["kind" if lib.startswith("kinds/") else lib]
        if dep not in allowed:
            bad.append(f"{lib} -> {dep}: {f}:{line} (allowed: {', '.join(sorted(allowed)) or 'none'})")
    return bad


def find_cycle(graph):
    """One cycle of `graph` ({node: set(nodes)}) as a list of nodes, or None."""
    state = {}
    stack = []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                c = visit(m)
                if c:
                    return c
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            c = visit(n)
            if c:
                return c
    return None


def header_graph(root, libs):
    """{header: set(headers)}: include edges between the scanned headers, by include path."""
    by_path = {}
    for files in libs.values():
        for f in files:
            parts = f.relative_to(root).parts
            if "include" in parts and f.suffix in (".hpp", ".h"):
                by_path["/".join(parts[parts.index("include") + 1:])] = f
    graph = {}
    for path, f in by_path.items():
        graph[path] = {m.group(1) for m in INCLUDE_RE.finditer(f.read_text(errors="replace"))
                       if m.group(1) in by_path}
    return graph


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=pathlib.Path(__file__).resolve().parent.parent,
                    type=pathlib.Path)
    ap.add_argument("--graph", action="store_true", help="print the library graph")
    args = ap.parse_args()
    libs = libraries(args.root)
    found = edges(args.root, libs)
    graph = {}
    for lib, dep, _, _ in found:
        graph.setdefault(lib, set()).add(dep)
    if args.graph:
        for lib in sorted(libs):
            print(f"{lib} -> {', '.join(sorted(graph.get(lib, ()))) or '(none)'}")
    problems = layer_violations(found)
    cycle = find_cycle(graph)
    if cycle:
        problems.append("library include cycle: " + " -> ".join(cycle))
    hcycle = find_cycle(header_graph(args.root, libs))
    if hcycle:
        problems.append("header include cycle: " + " -> ".join(hcycle))
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"check_layers: {len(libs)} libraries, {len(found)} cross-library includes, "
          "no cycle, no layer reaching up")
    return 0


if __name__ == "__main__":
    sys.exit(main())
