"""tools/check_layers.py: the real tree passes; a layer reaching up, a kind including another
kind or the recording library, and an include cycle are each reported (issue 23)."""
import pathlib
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import check_layers  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "tools" / "check_layers.py"


def write(root, rel, text):
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def run(root):
    r = subprocess.run([sys.executable, str(SCRIPT), "--root", str(root)],
                       capture_output=True, text=True, check=False)
    return r.returncode, r.stdout


class CheckLayers(unittest.TestCase):
    def tree(self):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        root = pathlib.Path(d.name)
        write(root, "libs/core/include/hyloop/core/a.hpp", "#pragma once\n")
        write(root, "libs/experiment/include/hyloop/experiment/kind.hpp",
              '#include "hyloop/core/a.hpp"\n')
        write(root, "libs/recording/src/run.cpp", '#include "hyloop/experiment/kind.hpp"\n')
        write(root, "kinds/one/src/one.cpp", '#include "hyloop/experiment/kind.hpp"\n')
        write(root, "kinds/two/src/two.cpp", '#include "hyloop/experiment/kind.hpp"\n')
        write(root, "kinds/two/include/hyloop/kinds/two/two.hpp", "#pragma once\n")
        return root

    def test_the_real_tree_passes(self):
        code, out = run(ROOT)
        self.assertEqual(code, 0, out)
        self.assertIn("no cycle", out)

    def test_a_clean_tree_passes(self):
        code, out = run(self.tree())
        self.assertEqual(code, 0, out)

    def test_the_framework_including_recording_is_refused(self):
        root = self.tree()
        write(root, "libs/experiment/src/kind.cpp", '#include "hyloop/recording/run.hpp"\n')
        code, out = run(root)
        self.assertEqual(code, 1)
        self.assertIn("experiment -> recording: libs/experiment/src/kind.cpp:1", out)

    def test_the_framework_naming_a_kind_is_refused(self):
        root = self.tree()
        write(root, "libs/experiment/src/kind.cpp", '\n#include "hyloop/kinds/two/two.hpp"\n')
        code, out = run(root)
        self.assertEqual(code, 1)
        self.assertIn("experiment -> kinds/two: libs/experiment/src/kind.cpp:2", out)

    def test_a_kind_including_another_kind_or_recording_is_refused(self):
        root = self.tree()
        write(root, "kinds/one/src/one.cpp",
              '#include "hyloop/kinds/two/two.hpp"\n#include "hyloop/recording/run.hpp"\n')
        code, out = run(root)
        self.assertEqual(code, 1)
        self.assertIn("kinds/one -> kinds/two: kinds/one/src/one.cpp:1", out)
        self.assertIn("kinds/one -> recording: kinds/one/src/one.cpp:2", out)

    def test_cycles_are_found(self):
        self.assertEqual(check_layers.find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}),
                         ["a", "b", "c", "a"])
        self.assertIsNone(check_layers.find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}))

    def test_a_header_cycle_is_refused(self):
        root = self.tree()
        write(root, "libs/core/include/hyloop/core/a.hpp", '#include "hyloop/core/b.hpp"\n')
        write(root, "libs/core/include/hyloop/core/b.hpp", '#include "hyloop/core/a.hpp"\n')
        code, out = run(root)
        self.assertEqual(code, 1)
        self.assertIn("header include cycle: hyloop/core/a.hpp -> hyloop/core/b.hpp -> "
                      "hyloop/core/a.hpp", out)


if __name__ == "__main__":
    unittest.main()
