// The plotting script behind `hyloop report` and `hyloop compare`: report.py, found next to an
// installed binary (<prefix>/share/hyloop) or in the source tree's tools/.
#pragma once

#include <string>
#include <vector>

namespace hyloop::app {

// Runs `/usr/bin/python3 report.py ARGS...` (the binary's `argv0` locates the script) and returns
// its exit status (1 when it did not exit normally).
int run_report_script(const char* argv0, const std::vector<std::string>& args);

}  // namespace hyloop::app
