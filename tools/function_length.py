#!/usr/bin/env python3
"""Lengths of the C++ function definitions in a tree: the longest ones, or (--max N) each longer.

A function's length is the number of source lines from the first line of its declaration (return
type, attributes and template header included) to the line of its closing brace, both included.
Comments, string and character literals (raw strings too) and preprocessor lines are blanked before
scanning, so braces in them do not count. Everything inside a body (lambdas, local classes) counts
toward the enclosing function. Namespace, class, struct, union and enum bodies are scopes whose
member functions are found like free ones; braced initializers (`int x{0};`, `T a = {..};`,
`Foo() : x_{1} {}`) are not bodies.

    tools/function_length.py services/                 # the 20 longest
    tools/function_length.py services/ --max 79        # exit 1 naming each function > 79 lines
    tools/function_length.py services/ --max 79 --exclude services/dynamics/dynamics_component.cpp
    tools/function_length.py services apps libs --max 79 --skip '*/test/*' \
        --allow tools/function_length_allow.txt     # what ctest's function_length runs

--skip PATTERN leaves out the files whose path (as found under the given paths) matches a glob
(fnmatch: `*` also matches `/`): tests and generated code. --allow FILE names functions that may
stay longer for now, one a line: `PATH FUNCTION  # reason` (the reason is required; PATH as the
checker prints it, FUNCTION as it names it). An allowed function is listed, not counted; an entry
whose function is no longer too long (or gone) is reported as stale, so the entry gets removed.
"""

from __future__ import annotations

import argparse
import fnmatch
import re
import sys
from dataclasses import dataclass
from pathlib import Path

CPP_SUFFIXES = {".cpp", ".cc", ".cxx", ".hpp", ".hh", ".hxx", ".h", ".ipp", ".inl"}
RAW_PREFIXES = {"R", "u8R", "uR", "UR", "LR"}


@dataclass(frozen=True)
class Function:
    path: str
    line: int  # first line of the declaration (1-based)
    name: str
    lines: int


def blank(text: str) -> str:
    """`text` with comments, literals and preprocessor lines replaced by spaces (newlines kept)."""
    out = list(text)
    n = len(text)
    i = 0
    line_start = True  # only whitespace since the last newline

    def wipe(a: int, b: int) -> None:
        for k in range(a, min(b, n)):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if c == "\n":
            line_start = True
            i += 1
            continue
        if line_start and c == "#":  # a directive, with its continuation lines
            j = i
            while j < n and text[j] != "\n":
                if text.startswith("//", j):
                    break
                if text.startswith("/*", j):
                    end = text.find("*/", j + 2)
                    j = n if end < 0 else end + 2
                    continue
                if text[j] == "\\" and j + 1 < n and text[j + 1] == "\n":
                    j += 2
                    continue
                j += 1
            wipe(i, j)
            i = j
            continue
        if not c.isspace():
            line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            wipe(i, j)
            i = j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            wipe(i, j)
            i = j
            continue
        if c == '"':
            m = re.search(r"[A-Za-z0-9_]+$", text[max(0, i - 4):i])
            prefix = m.group(0) if m else ""
            if prefix in RAW_PREFIXES:
                paren = text.find("(", i + 1)
                delim = text[i + 1:paren]
                end = text.find(")" + delim + '"', paren + 1)
                j = n if end < 0 else end + len(delim) + 2
                wipe(i + 1, j - 1)
                i = j
                continue
            j = i + 1
            while j < n and text[j] != '"' and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            wipe(i + 1, j)
            i = j + 1
            continue
        if c == "'":
            m = re.search(r"[A-Za-z0-9_.]+$", text[max(0, i - 64):i])
            if m and m.group(0)[0].isdigit():  # a digit separator: 1'000'000
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != "'" and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            wipe(i + 1, j)
            i = j + 1
            continue
        i += 1
    return "".join(out)


SCOPE_RE = re.compile(r"^(inline\s+)?namespace\b|^extern\s*\"|^(class|struct|union|enum)\b")
ACCESS_RE = re.compile(r"^(public|private|protected)\s*:(?!:)\s*")
TEMPLATE_RE = re.compile(r"^template\s*<")


def strip_template(head: str) -> str:
    """`head` without leading `template <...>` headers."""
    while TEMPLATE_RE.match(head):
        depth = 0
        for k, ch in enumerate(head):
            if ch == "<":
                depth += 1
            elif ch == ">":
                depth -= 1
                if depth == 0:
                    head = head[k + 1:].lstrip()
                    break
        else:
            return head
    return head


def param_list(head: str) -> tuple[int, int] | None:
    """(open, close) of the parameter list in a declaration head: the first top-level `(`
    outside template arguments (after `operator()` when that is the name)."""
    angle = 0
    k = 0
    while k < len(head):
        ch = head[k]
        if head.startswith("operator", k) and not re.match(r"[A-Za-z0-9_]", head[k - 1:k] or " "):
            m = re.match(r"operator\s*(\(\s*\)|\[\s*\]|[^\s(]+|\s+[A-Za-z_][\w:<>\s*&]*?(?=\())", head[k:])
            if m:
                k += m.end()
                continue
        if ch == "<" and re.search(r"[A-Za-z0-9_]\s*$", head[:k]):
            angle += 1
        elif ch == ">" and angle > 0:
            angle -= 1
        elif ch == "(" and angle == 0:
            depth = 0
            for j in range(k, len(head)):
                if head[j] == "(":
                    depth += 1
                elif head[j] == ")":
                    depth -= 1
                    if depth == 0:
                        return k, j
            return None
        elif ch == "=" and angle == 0:
            return None  # an initializer (`auto f = [](...) {`, `T x = T(...)`)
        k += 1
    return None


def function_name(head: str, open_paren: int) -> str:
    before = head[:open_paren].rstrip()
    m = re.search(r"((?:[A-Za-z_~][\w]*\s*(?:<[^()]*?>)?\s*::\s*)*(?:operator\s*\S+?|operator\s*\(\s*\)|~?[A-Za-z_]\w*))$", before)
    name = m.group(1) if m else before.split()[-1] if before.split() else "?"
    name = re.sub(r"\s+", "", name)
    if re.fullmatch(r"[A-Z][A-Z0-9_]*", name):  # a macro (TEST_F(Suite, Name)): with its arguments
        close = head.find(")", open_paren)
        name += re.sub(r"\s+", "", head[open_paren:close + 1]).replace(",", ", ")
    return name


def scan(text: str, path: str = "<text>") -> list[Function]:
    """Every function definition in C++ source `text`."""
    src = blank(text)
    n = len(src)
    line_of = [0] * (n + 1)
    ln = 1
    for k, ch in enumerate(src):
        line_of[k] = ln
        if ch == "\n":
            ln += 1
    line_of[n] = ln

    def match_brace(k: int) -> int:
        depth = 0
        for j in range(k, n):
            if src[j] == "{":
                depth += 1
            elif src[j] == "}":
                depth -= 1
                if depth == 0:
                    return j
        return n - 1

    found: list[Function] = []
    head_start = 0
    i = 0
    while i < n:
        ch = src[i]
        if ch in ";}":
            head_start = i + 1
        elif ch == ":" and ACCESS_RE.match(src[head_start:i + 2].strip() + " "):
            head_start = i + 1
        elif ch == "{":
            raw = src[head_start:i]
            lead = len(raw) - len(raw.lstrip())
            head = raw.strip()
            m = ACCESS_RE.match(head)
            if m:
                lead += m.end()
                head = head[m.end():]
            core = strip_template(head)
            if not head or SCOPE_RE.match(core):
                head_start = i + 1  # a scope: its members are scanned as they come
            else:
                pl = param_list(core)
                prev = src[:i].rstrip()[-1:] if src[:i].rstrip() else ""
                in_init = False
                if pl is not None:
                    tail = core[pl[1] + 1:]
                    in_init = re.search(r"(?<!:):(?!:)", re.sub(r"\([^()]*\)", "", tail)) is not None
                if pl is None or (in_init and (prev.isalnum() or prev in "_>")):
                    i = match_brace(i)  # a braced initializer: part of the declaration
                    i += 1
                    continue
                end = match_brace(i)
                start_line = line_of[head_start + lead]
                found.append(Function(path, start_line, function_name(core, pl[0]),
                                      line_of[end] - start_line + 1))
                i = end + 1
                head_start = i
                continue
        i += 1
    return found


def cpp_files(paths: list[str]) -> list[Path]:
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            files += sorted(f for f in p.rglob("*") if f.suffix in CPP_SUFFIXES and f.is_file())
        else:
            files.append(p)
    return files


@dataclass(frozen=True)
class Allowed:
    path: str
    name: str
    reason: str


def read_allow_list(path: str) -> list[Allowed]:
    """The entries of an allow-list file. @raises ValueError naming the line of a bad entry."""
    entries: list[Allowed] = []
    for number, raw in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        entry, _, reason = line.partition("#")
        fields = entry.split(None, 1)
        if len(fields) < 2 or not reason.strip():
            raise ValueError(f"{path}:{number}: expected 'PATH FUNCTION  # reason', got {raw!r}")
        entries.append(Allowed(str(Path(fields[0])), fields[1].strip(), reason.strip()))
    return entries


def skipped(path: Path, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatch(path.as_posix(), p) for p in patterns)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", help="directories (searched recursively) or files")
    ap.add_argument("--max", type=int, help="exit 1 if a function is longer than this many lines")
    ap.add_argument("--top", type=int, default=20, help="how many of the longest to list")
    ap.add_argument("--exclude", action="append", default=[],
                    help="a file to leave out (an allow-list entry; repeatable)")
    ap.add_argument("--skip", action="append", default=[], metavar="PATTERN",
                    help="leave out files whose path matches this glob, e.g. '*/test/*' "
                         "(repeatable)")
    ap.add_argument("--allow", metavar="FILE",
                    help="allow-list of functions that may stay longer: 'PATH FUNCTION  # reason'")
    args = ap.parse_args(argv)
    excluded = {Path(e).resolve() for e in args.exclude}
    try:
        allowed = read_allow_list(args.allow) if args.allow else []
    except (OSError, ValueError) as e:
        print(f"function_length: {e}", file=sys.stderr)
        return 2
    functions: list[Function] = []
    for f in cpp_files(args.paths):
        if f.resolve() in excluded or skipped(f, args.skip):
            continue
        functions += scan(f.read_text(encoding="utf-8", errors="replace"), str(f))
    functions.sort(key=lambda fn: (-fn.lines, fn.path, fn.line))
    if args.max is None:
        for fn in functions[:args.top]:
            print(f"{fn.path}:{fn.line} {fn.name} {fn.lines}")
        return 0
    allow = {(str(Path(a.path)), a.name): a for a in allowed}
    over = []
    used = set()
    for fn in (fn for fn in functions if fn.lines > args.max):
        entry = allow.get((str(Path(fn.path)), fn.name))
        if entry is None:
            over.append(fn)
            continue
        used.add((entry.path, entry.name))
        print(f"{fn.path}:{fn.line} {fn.name} {fn.lines} lines: allowed ({entry.reason})")
    for a in allowed:
        if (a.path, a.name) not in used:
            print(f"stale allow-list entry: {a.path} {a.name} is not longer than {args.max} lines "
                  "(or is gone): remove it")
    for fn in over:
        print(f"{fn.path}:{fn.line} {fn.name} {fn.lines} lines (> {args.max})")
    longest = functions[0] if functions else None
    if not over:
        print(f"{len(functions)} functions, none longer than {args.max} lines"
              + (f" but {len(used)} allowed" if used else "")
              + (f" (longest: {longest.path}:{longest.line} {longest.name} {longest.lines})"
                 if longest else ""))
        return 0
    print(f"{len(over)} of {len(functions)} functions longer than {args.max} lines")
    return 1


if __name__ == "__main__":
    sys.exit(main())
