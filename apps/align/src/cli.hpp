// The command line of weft-align, callable in-process (the tests use it).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace align {

/// Runs "map ..." or "gen ..." (args excludes the program name). Results go to the files named
/// (or stdout); errors to `err` as "weft-align: <file>:<line>: <what>". Returns the exit status:
/// 0 success, 1 bad input or failure, 2 bad command line.
int run_cli(const std::vector<std::string>& args, std::ostream& err, bool stderr_is_tty);

}  // namespace align
