#!/usr/bin/env python3
"""Runnable documentation: extract the fenced blocks marked runnable and run them.

A block a reader is meant to copy, and that runs on one machine without hardware, is marked in
its fence's info string:

    ```sh runnable           a shell block, run by bash
    ```python runnable       a Python block, run by /usr/bin/python3 (the venv's python3 once
                             a block has activated one)

Every other sh/bash/shell/console block is "not runnable" and the report gives the reason: an
HTML comment on the line before the fence, `<!-- not-runnable: REASON -->`, or one inferred from
its commands (Docker, Kubernetes, the three-host lab, ...). A not-runnable block without either is
listed as "no reason given" and fails `--strict`.

The marked blocks of one file run in order in ONE bash session (variables, `cd` and an activated
venv carry over, as in a reader's terminal) with `set -eo pipefail` (a line `! cmd` must fail), in a fresh scratch directory
that holds the checkout's top-level entries as symbolic links (scenarios/, data/, proto/, ...),
`build` as a link to the build under test, and a copy of clients/python (pip builds in place).
A failing command fails the check, naming the file and the block's line. Background jobs a block
starts are killed with the session's process group at the end.

    doc_blocks.py report FILE...                     what is runnable and what is not, and why
    doc_blocks.py script FILE                        the bash script run for FILE
    doc_blocks.py run --source DIR --build DIR --scratch DIR [--timeout S] [--jobs N] [--strict]
                      FILE...                        (--timeout: per file; --jobs: files at once)
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Sequence

SHELL_LANGS = {"sh", "bash", "shell", "console", "zsh"}
RUNNABLE_LANGS = {"sh", "bash", "python"}
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>```+|~~~+)\s*(?P<info>[^`]*)$")
NOT_RUNNABLE = re.compile(r"<!--\s*not-runnable:\s*(?P<reason>.*?)\s*-->")

# (pattern, reason) for not-runnable blocks without an explicit reason; first match wins.
INFERRED = [
    (re.compile(r"\bkubectl\b"), "needs a Kubernetes cluster"),
    (re.compile(r"\bdocker(-compose)?\b"), "needs a Docker engine (docker-compose, images)"),
    (re.compile(r"\b(rt-pc|model-pc|ops-pc|ptp4l|phc2sys|chronyc|ethtool|pmc)\b"),
     "needs the three-host lab (its host names, NICs or clocks)"),
    (re.compile(r"\b(scripts/demo\.sh|scripts/test\.sh|scripts/setup\.sh|scripts/build\.sh|"
                r"scripts/sanitize\.sh|scripts/fuzz\.sh|apt-get)\b"),
     "sets up, builds or runs the whole suite (CI runs these itself)"),
    (re.compile(r"\bprometheus\b|\bpromtool\b"), "starts or checks a Prometheus server"),
    (re.compile(r"\b[a-z_]+_bench\b"), "a benchmark (minutes; its results are in bench/results)"),
    (re.compile(r"\bsystemctl\b|/etc/"), "changes the host's configuration"),
]


@dataclass
class Block:
    path: str
    line: int  # 1-based line of the opening fence
    lang: str
    runnable: bool
    reason: str  # why not runnable ("" when runnable)
    text: str


def parse(path: Path, display: Optional[str] = None) -> List[Block]:
    """The fenced code blocks of a Markdown file (shell and Python ones, and marked ones)."""
    name = display or str(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: List[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, indent = m.group("fence"), len(m.group("indent"))
        words = m.group("info").split()
        lang = words[0].lower() if words else ""
        runnable = "runnable" in words[1:]
        body: List[str] = []
        j = i + 1
        while j < len(lines):
            close = lines[j].strip()
            if close.startswith(fence[0] * len(fence)) and close.strip(fence[0]) == "":
                break
            body.append(lines[j][indent:] if lines[j][:indent].strip() == "" else lines[j])
            j += 1
        text = "\n".join(body) + "\n"
        if runnable and lang not in RUNNABLE_LANGS:
            raise SystemExit(f"{name}:{i + 1}: a runnable block must be sh, bash or python, "
                             f"not {lang or 'unlabelled'}")
        if runnable or lang in SHELL_LANGS:
            reason = ""
            if not runnable:
                k = i - 1
                while k >= 0 and lines[k].strip() == "":
                    k -= 1
                explicit = NOT_RUNNABLE.search(lines[k]) if k >= 0 else None
                if explicit:
                    reason = explicit.group("reason")
                else:
                    reason = next((r for p, r in INFERRED if p.search(text)), "")
            blocks.append(Block(name, i + 1, lang, runnable, reason, text))
        i = j + 1
    return blocks


def script(blocks: Sequence[Block]) -> str:
    """One bash session running the runnable blocks in order; a failure names its block."""
    out = ["set -eo pipefail",
           "__block=start",
           "trap 'rc=$?; echo \"check_docs: FAILED (exit $rc) in the block at $__block\" >&2' ERR"]
    for b in blocks:
        if not b.runnable:
            continue
        where = f"{b.path}:{b.line}"
        out.append(f"__block={shlex.quote(where)}")
        out.append(f"echo \"{'check_docs: ---- ' + where} (at ${{SECONDS}} s)\" >&2")
        if b.lang == "python":
            tag = "HYLOOP_DOCS_PYTHON_EOF"
            # the venv's python3 once one is activated, else Debian's (DESIGN.md §5: another
            # python3 on PATH may not see Debian's modules)
            out.append('if [ -n "$VIRTUAL_ENV" ]; then __py=python3; else __py=/usr/bin/python3; fi')
            out.append(f"\"$__py\" - <<'{tag}'\n{b.text}{tag}")
        else:
            out.append(expect_failures(b.text.rstrip("\n"), where))
    out.append("echo check_docs: ok >&2")
    return "\n".join(out) + "\n"


def expect_failures(text: str, where: str) -> str:
    """`! cmd` documents a command that must fail, but bash's errexit ignores a `!` pipeline
    whatever its status: after each such command (with its continuation lines) check that it
    did fail."""
    out: List[str] = []
    pending = False
    for line in text.split("\n"):
        if not pending and line.lstrip().startswith("! "):
            pending = True
        out.append(line)
        if pending and not line.rstrip().endswith("\\"):
            out.append(f"[ $? -eq 0 ] || {{ echo \"check_docs: a command at {where} was expected "
                       "to fail and succeeded\" >&2; false; }")
            pending = False
    return "\n".join(out)


def report(blocks: Sequence[Block]) -> List[str]:
    rows = []
    for b in blocks:
        first = next((ln.strip() for ln in b.text.splitlines() if ln.strip()), "")[:70]
        state = "runnable" if b.runnable else f"not runnable: {b.reason or 'no reason given'}"
        rows.append(f"{b.path}:{b.line}: {b.lang or '-'}: {state}: {first}")
    return rows


def make_scratch(source: Path, build: Path, scratch: Path) -> None:
    """A directory that looks like the checkout with `build` being the build under test."""
    if scratch.exists():
        shutil.rmtree(scratch)
    scratch.mkdir(parents=True)
    for entry in sorted(source.iterdir()):
        if entry.name in (".git", "clients", "runs") or entry.name.startswith("build"):
            continue
        (scratch / entry.name).symlink_to(entry)
    (scratch / "build").symlink_to(build.resolve())
    if (source / "clients").is_dir():
        shutil.copytree(source / "clients", scratch / "clients",
                        ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))


def stop_group(proc: subprocess.Popen) -> None:
    """SIGTERM to the session's process group (background jobs the blocks started), then
    SIGKILL to whatever is left after 5 s."""
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    deadline = time.monotonic() + 5.0
    sig = signal.SIGTERM
    while group_alive(proc.pid):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        if sig == signal.SIGKILL:
            return
        time.sleep(0.1)
        if time.monotonic() > deadline:
            sig = signal.SIGKILL


def group_alive(pgid: int) -> bool:
    """A process of the group that is not a zombie exists (Linux /proc)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            return True
    return False


def run_file(doc: Path, display: str, source: Path, build: Path, scratch: Path,
             timeout: float) -> "tuple[bool, str]":
    """Runs the file's session; returns (passed, its output)."""
    blocks = parse(doc, display)
    marked = [b for b in blocks if b.runnable]
    if not marked:
        return True, f"check_docs: {display}: no runnable blocks\n"
    make_scratch(source, build, scratch)
    (scratch / ".check_docs.sh").write_text(script(blocks))
    env = dict(os.environ)
    env["PATH"] = f"{build.resolve() / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env.pop("HYLOOP_PYTHON_STUBS", None)  # the docs must say how the stubs are found
    env.pop("VIRTUAL_ENV", None)
    start = time.monotonic()
    log = scratch / ".check_docs.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(["bash", ".check_docs.sh"], cwd=scratch, env=env,
                                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
        verdict = ""
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            verdict = f"check_docs: {display}: FAILED: still running after {timeout:.0f} s\n"
            rc = -1
        finally:
            stop_group(proc)
    took = time.monotonic() - start
    text = (f"check_docs: {display}: {len(marked)} runnable blocks in {scratch}\n" +
            log.read_text(errors="replace") + verdict +
            f"check_docs: {display}: {'ok' if rc == 0 else 'FAILED'} ({took:.1f} s)\n")
    return rc == 0, text


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("report", help="list the blocks: runnable, or why not")
    r.add_argument("files", nargs="+", type=Path)
    r.add_argument("--strict", action="store_true", help="exit 1 if a reason is missing")
    s = sub.add_parser("script", help="print the bash script run for one file")
    s.add_argument("file", type=Path)
    x = sub.add_parser("run", help="run the runnable blocks of each file")
    x.add_argument("files", nargs="+", type=Path)
    x.add_argument("--source", type=Path, required=True, help="the checkout")
    x.add_argument("--build", type=Path, required=True, help="the build under test")
    x.add_argument("--scratch", type=Path, required=True, help="scratch directory (replaced)")
    x.add_argument("--timeout", type=float, default=120.0, help="seconds per file")
    x.add_argument("--strict", action="store_true", help="fail if a reason is missing")
    x.add_argument("--jobs", type=int, default=2, help="files run at once (default 2)")
    a = p.parse_args(argv)

    if a.cmd == "script":
        sys.stdout.write(script(parse(a.file)))
        return 0
    source = getattr(a, "source", None)
    failed = False
    missing = 0
    jobs = []
    for f in a.files:
        display = os.path.relpath(f, source) if source else str(f)
        blocks = parse(f, display)
        for row in report(blocks):
            print(row)
        missing += sum(1 for b in blocks if not b.runnable and not b.reason)
        if a.cmd == "run":
            slug = re.sub(r"[^A-Za-z0-9]+", "_", display)
            jobs.append((f, display, a.source, a.build, a.scratch / slug, a.timeout))
    sys.stdout.flush()
    if jobs:  # the files' sessions are independent (own scratch directory, free ports)
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
            for ok, text in pool.map(lambda j: run_file(*j), jobs):
                sys.stdout.write(text)
                sys.stdout.flush()
                failed |= not ok
    if missing and a.strict:
        print(f"check_docs: {missing} not-runnable blocks give no reason "
              "(add <!-- not-runnable: REASON --> before the fence)")
        failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
