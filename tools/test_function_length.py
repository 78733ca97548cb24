"""Tests of tools/function_length.py against hand-counted functions, and its --max exit code."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import function_length  # noqa: E402

TOOL = Path(__file__).resolve().parent / "function_length.py"

# Hand-counted: the line each definition starts on and its length (first line to closing brace).
SOURCE = r'''#include <string>
#define OPEN {
#define MULTI(x) \
  do { x; } while (0)

namespace a::b {

namespace {
constexpr int kBig = 1'000'000;  // a digit separator, not a character literal
}  // namespace

/* a comment with a brace { that must not open anything
   } */
int plain(int x) {
  return x + 1;
}

const char* tricky() {
  const char* s = "} { \" {";
  const char c = '{';
  const char* r = R"x(})" { )x";
  // }
  return c == '}' ? s : r;
}

struct Point {
  int x{0};
  int y = 0;
  std::array<int, 2> z{1, 2};
  int sum() const noexcept { return x + y; }
  bool operator()(int v) const {
    return v > x;
  }
};

class Widget : public Base {
 public:
  Widget(int a, int b)
      : a_{a},
        b_(b) {
    init();
  }

 private:
  int a_;
  int b_;
};

template <typename T>
T twice(T v)
{
  auto f = [](T w) {
    return w + w;
  };
  return f(v);
}

const auto kLambda = [](int v) {
  return v;
};

std::string Widget::name() const {
  struct Local {
    int n{1};
  };
  if (a_ > 0) {
    return "{";
  }
  return "}";
}

}  // namespace a::b
'''

EXPECTED = {
    # name: (first line, lines)
    "plain": (14, 3),
    "tricky": (18, 7),
    "sum": (30, 1),
    "operator()": (31, 3),
    "Widget": (38, 5),
    "twice": (49, 8),  # from its template line
    "Widget::name": (62, 9),
}


class ScanTest(unittest.TestCase):
    def test_hand_counted_functions(self) -> None:
        found = {f.name: (f.line, f.lines) for f in function_length.scan(SOURCE, "t.cpp")}
        self.assertEqual(found, EXPECTED)

    def test_blank_keeps_lines_and_removes_literals(self) -> None:
        blanked = function_length.blank(SOURCE)
        self.assertEqual(blanked.count("\n"), SOURCE.count("\n"))
        self.assertEqual(blanked.count("{"), blanked.count("}"))
        self.assertNotIn("must not open", blanked)

    def test_lambda_body_counts_toward_its_function(self) -> None:
        src = "void f() {\n  g([] {\n    h();\n  });\n}\n"
        self.assertEqual([(f.name, f.lines) for f in function_length.scan(src)], [("f", 5)])

    def test_function_try_block_and_trailing_return(self) -> None:
        src = "auto f(int x) -> int {\n  return x;\n}\nvoid g() noexcept(true) {}\n"
        found = [(f.name, f.line, f.lines) for f in function_length.scan(src)]
        self.assertEqual(found, [("f", 1, 3), ("g", 4, 1)])


    def test_test_macro_is_named_with_its_arguments(self) -> None:
        src = "TEST_F(Suite, Does) {\n  EXPECT_TRUE(x);\n}\n"
        found = [(f.name, f.lines) for f in function_length.scan(src)]
        self.assertEqual(found, [("TEST_F(Suite, Does)", 3)])


class CommandLineTest(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempfile.TemporaryDirectory()
        root = Path(self.dir.name)
        (root / "sub").mkdir()
        body = "".join(f"  x += {i};\n" for i in range(8))
        (root / "sub" / "long.cpp").write_text(f"int longest(int x) {{\n{body}  return x;\n}}\n")
        (root / "short.hpp").write_text("inline int one() { return 1; }\n")
        (root / "notes.txt").write_text("int ignored() {\n}\n")
        self.root = root

    def tearDown(self) -> None:
        self.dir.cleanup()

    def run_tool(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, str(TOOL), str(self.root), *args],
                              capture_output=True, text=True, check=False)

    def test_over_the_limit_fails_naming_the_function(self) -> None:
        r = self.run_tool("--max", "10")  # longest() has 11 lines
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("long.cpp:1 longest 11 lines (> 10)", r.stdout)
        self.assertNotIn("one", r.stdout)

    def test_at_the_limit_passes(self) -> None:
        r = self.run_tool("--max", "11")
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("2 functions, none longer than 11 lines", r.stdout)

    def test_excluded_file_is_not_checked(self) -> None:
        r = self.run_tool("--max", "10", "--exclude", str(self.root / "sub" / "long.cpp"))
        self.assertEqual(r.returncode, 0, r.stdout)

    def test_skipped_pattern_is_not_checked(self) -> None:
        r = self.run_tool("--max", "10", "--skip", "*/sub/*")
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("1 functions, none longer than 10 lines", r.stdout)
        r = self.run_tool("--max", "10", "--skip", "*/other/*")
        self.assertEqual(r.returncode, 1, r.stdout)

    def write_allow(self, text: str) -> str:
        path = self.root / "allow.txt"
        path.write_text(text)
        return str(path)

    def test_allowed_function_is_listed_with_its_reason_and_passes(self) -> None:
        allow = self.write_allow(f"# a comment\n\n{self.root / 'sub' / 'long.cpp'} longest"
                                 "  # being split elsewhere\n")
        r = self.run_tool("--max", "10", "--allow", allow)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("longest 11 lines: allowed (being split elsewhere)", r.stdout)
        self.assertNotIn("stale", r.stdout)

    def test_allow_entry_names_the_function_not_the_file(self) -> None:
        (self.root / "sub" / "long.cpp").write_text(
            (self.root / "sub" / "long.cpp").read_text().replace("longest", "other"))
        allow = self.write_allow(f"{self.root / 'sub' / 'long.cpp'} longest  # reason\n")
        r = self.run_tool("--max", "10", "--allow", allow)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("long.cpp:1 other 11 lines (> 10)", r.stdout)
        self.assertIn("stale allow-list entry", r.stdout)

    def test_stale_allow_entry_is_reported(self) -> None:
        allow = self.write_allow(f"{self.root / 'short.hpp'} one  # reason\n")
        r = self.run_tool("--max", "11", "--allow", allow)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn(f"stale allow-list entry: {self.root / 'short.hpp'} one", r.stdout)

    def test_allow_entry_without_a_reason_is_refused(self) -> None:
        allow = self.write_allow(f"{self.root / 'sub' / 'long.cpp'} longest\n")
        r = self.run_tool("--max", "10", "--allow", allow)
        self.assertEqual(r.returncode, 2, r.stdout)
        self.assertIn("allow.txt:1: expected 'PATH FUNCTION  # reason'", r.stderr)

    def test_listing_is_longest_first(self) -> None:
        r = self.run_tool()
        self.assertEqual(r.returncode, 0)
        lines = r.stdout.splitlines()
        self.assertTrue(lines[0].endswith("longest 11"), lines)
        self.assertTrue(lines[1].endswith("one 1"), lines)


if __name__ == "__main__":
    unittest.main()
