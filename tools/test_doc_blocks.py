"""Tests of tools/doc_blocks.py: what is extracted, and that a failing marked command fails."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import doc_blocks  # noqa: E402

DOC = """# t

```sh runnable
echo one > one.txt
X=42
```

<!-- not-runnable: needs the robot -->
```sh
robot --move
```

```sh
docker-compose up -d
```

```sh
something unexplained
```

```python runnable
import os
print(open("one.txt").read().strip(), os.environ.get("X"))
```

```yaml
a: 1
```
"""


class DocBlocksTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)
        self.source = self.dir / "src"
        (self.source / "scenarios").mkdir(parents=True)
        self.build = self.dir / "build"
        (self.build / "bin").mkdir(parents=True)

    def tearDown(self) -> None:
        self.tmp.cleanup()

    def write(self, text: str) -> Path:
        p = self.source / "doc.md"
        p.write_text(text)
        return p

    def run_doc(self, text: str) -> subprocess.CompletedProcess:
        doc = self.write(text)
        return subprocess.run(
            [sys.executable, str(Path(doc_blocks.__file__)), "run", "--source", str(self.source),
             "--build", str(self.build), "--scratch", str(self.dir / "scratch"), "--timeout", "30",
             str(doc)], capture_output=True, text=True)

    def test_blocks_and_reasons(self) -> None:
        blocks = doc_blocks.parse(self.write(DOC), "doc.md")
        self.assertEqual([(b.line, b.lang, b.runnable) for b in blocks],
                         [(3, "sh", True), (9, "sh", False), (13, "sh", False),
                          (17, "sh", False), (21, "python", True)])
        self.assertEqual(blocks[1].reason, "needs the robot")
        self.assertIn("Docker", blocks[2].reason)
        self.assertEqual(blocks[3].reason, "")

    def test_marked_blocks_run_in_one_session_in_the_scratch_directory(self) -> None:
        r = self.run_doc(DOC.replace("X=42", "export X=42"))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("one 42", r.stdout)
        self.assertTrue((self.dir / "scratch" / "doc_md" / "one.txt").exists())
        self.assertTrue((self.dir / "scratch" / "doc_md" / "scenarios").is_symlink())
        self.assertFalse((self.source / "one.txt").exists())
        self.assertIn("not runnable: no reason given: something unexplained", r.stdout)

    def test_a_failing_marked_command_fails_and_names_its_block(self) -> None:
        r = self.run_doc("a\n\n```sh runnable\ntrue\n```\n\n```sh runnable\nfalse\necho after\n```\n")
        self.assertEqual(r.returncode, 1)
        self.assertIn("FAILED (exit 1) in the block at doc.md:7", r.stdout)
        self.assertNotIn("after", r.stdout)

    def test_a_failing_command_inside_a_pipeline_fails(self) -> None:
        r = self.run_doc("```sh runnable\nfalse | cat\n```\n")
        self.assertEqual(r.returncode, 1)

    def test_a_command_marked_to_fail_must_fail(self) -> None:
        r = self.run_doc("```sh runnable\n! false   # refused\n! test 1 = \\\n    2\n```\n")
        self.assertEqual(r.returncode, 0, r.stdout)
        r = self.run_doc("```sh runnable\n! true   # refused?\necho after\n```\n")
        self.assertEqual(r.returncode, 1)
        self.assertIn("expected to fail and succeeded", r.stdout)
        self.assertNotIn("after", r.stdout.split("expected to fail")[1])

    def test_a_failing_python_block_fails(self) -> None:
        r = self.run_doc("```python runnable\nraise SystemExit(3)\n```\n")
        self.assertEqual(r.returncode, 1)
        self.assertIn("FAILED (exit 3)", r.stdout)

    def test_background_jobs_are_killed_at_the_end(self) -> None:
        r = self.run_doc("```sh runnable\nsleep 300 &\necho $! > pid\n```\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        pid = int((self.dir / "scratch" / "doc_md" / "pid").read_text())
        try:  # gone, or a zombie waiting for init to reap it
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            state = "gone"
        self.assertIn(state, ("gone", "Z"))

    def test_build_bin_is_first_on_path(self) -> None:
        tool = self.build / "bin" / "hyloop"
        tool.write_text("#!/bin/sh\necho fake-hyloop\n")
        tool.chmod(0o755)
        r = self.run_doc("```sh runnable\nhyloop\nbuild/bin/hyloop\n```\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.count("fake-hyloop"), 2)

    def test_one_failing_file_fails_the_run_of_several(self) -> None:
        good = self.source / "good.md"
        good.write_text("```sh runnable\ntrue\n```\n")
        bad = self.source / "bad.md"
        bad.write_text("```sh runnable\nexit 4\n```\n")
        r = subprocess.run(
            [sys.executable, str(Path(doc_blocks.__file__)), "run", "--source", str(self.source),
             "--build", str(self.build), "--scratch", str(self.dir / "scratch"), "--jobs", "2",
             str(good), str(bad)], capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn("check_docs: good.md: ok", r.stdout)
        self.assertIn("check_docs: bad.md: FAILED", r.stdout)

    def test_strict_fails_on_a_missing_reason(self) -> None:
        doc = self.write(DOC)
        r = subprocess.run([sys.executable, str(Path(doc_blocks.__file__)), "report", "--strict",
                            str(doc)], capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn("1 not-runnable blocks give no reason", r.stdout)


if __name__ == "__main__":
    unittest.main()
