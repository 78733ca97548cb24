#!/usr/bin/env python3
"""Fails when services/, apps/ or libs/ (the framework) name an experiment kind.

Issue 12: the services, the coordinator and the tools ask the kind registry
(libs/experiment/include/hyloop/experiment/kind.hpp) and never name a kind. This scans every
C++ string or character literal in the given directories that is a kind's name, any case
(`kind == "fcu"`, `{"sits", ...}`), and prints each one as FILE:LINE: LITERAL. (Prose that
mentions a method, e.g. a metric's help "(SITS Eq. 44)", is not a kind name.)
The kind names are read from the kinds' own files (`std::string name() const override { return
"x"; }` in libs/experiment/src/*.cpp and kinds/*/src/*.cpp), so a new kind is checked without editing this script.

Tests (a `test` directory) may name kinds: they exercise them. A kind lives in kinds/<name>/;
the report's Python is checked by tools/test_report_roles.py.

  tools/check_kind_names.py [--root DIR] [DIRS ...]    # default: services apps libs
"""
import argparse
import pathlib
import re
import sys

NAME_RE = re.compile(r'std::string\s+name\(\)\s+const\s+override\s*\{\s*return\s+"([^"]+)"\s*;')
# A string literal (raw strings are not used in these directories) or a character literal.
LITERAL_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')
COMMENT_RE = re.compile(r'//[^\n]*|/\*.*?\*/', re.S)


def kind_names(root):
    names = set()
    sources = list((root / "libs" / "experiment" / "src").glob("*.cpp"))
    sources += list((root / "kinds").glob("*/src/*.cpp"))
    for path in sorted(sources):
        names.update(NAME_RE.findall(path.read_text(errors="replace")))
    return sorted(names)


def strip_comments(text):
    # Keeps line numbers: a comment becomes as many newlines as it spanned. Literals are matched
    # first so that "//" inside a string is not taken for a comment.
    def repl(m):
        s = m.group(0)
        return s if s[0] in "\"'" else "\n" * s.count("\n")
    return re.sub(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|//[^\n]*|/\*.*?\*/', repl, text,
                  flags=re.S)


def findings(root, dirs, names):
    literal = re.compile(r'["\'](' + "|".join(map(re.escape, names)) + r')["\']', re.I)
    out = []
    for d in dirs:
        for path in sorted((root / d).rglob("*")):
            if path.suffix not in (".cpp", ".hpp", ".h", ".cc") or not path.is_file():
                continue
            if "test" in path.relative_to(root).parts:
                continue
            text = strip_comments(path.read_text(errors="replace"))
            for m in LITERAL_RE.finditer(text):
                if literal.fullmatch(m.group(0)):
                    line = text.count("\n", 0, m.start()) + 1
                    out.append(f"{path.relative_to(root)}:{line}: {m.group(0)}")
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", default=".", help="the source tree (default: .)")
    p.add_argument("dirs", nargs="*", default=["services", "apps", "libs"])
    a = p.parse_args()
    root = pathlib.Path(a.root).resolve()
    names = kind_names(root)
    if not names:
        print(f"{root}: no kind found in libs/experiment/src or kinds/*/src (name() const override)")
        return 2
    found = findings(root, a.dirs, names)
    for f in found:
        print(f)
    if found:
        print(f"{len(found)} literal(s) name a kind ({', '.join(names)}): ask the kind registry "
              "(hyloop/experiment/kind.hpp) instead")
        return 1
    print(f"no literal in {', '.join(a.dirs)} names a kind ({', '.join(names)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
