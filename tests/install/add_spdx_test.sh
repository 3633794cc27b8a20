#!/usr/bin/env bash
# add_spdx test: runs scripts/add-spdx on a small scratch tree holding one file of each kind it
# handles (and some it must leave alone), checks each file's SPDX line and its place, that a
# second run changes nothing, that --check passes then and fails on a file lacking the line, and
# that an executable keeps its mode.
#
#   bash add_spdx_test.sh PATH/TO/scripts/add-spdx
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail

script=$1
work=$(mktemp -d "${TMPDIR:-/tmp}/add_spdx_test.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/scripts" "$work/runtime/src" "$work/tests" "$work/apps/x/results" "$work/tools"
cp "$script" "$work/scripts/add-spdx"
cd "$work"

printf '#include <x>\nint f();\n' >runtime/src/a.cpp
printf '#pragma once\n' >runtime/src/a.hpp
printf 'int g(void);\n' >runtime/src/c.h
printf '/* asm */\n.text\n' >runtime/src/j.S
printf '// SPDX-License-Identifier: MIT\nint h();\n' >runtime/src/has.cpp
printf 'add_library(x a.cpp)\n' >runtime/CMakeLists.txt
printf 'set(X 1)\n' >tests/util.cmake
printf '#!/usr/bin/env bash\n# Usage: t.sh\n#   help line\nset -e\necho hi\n' >tests/t.sh
printf '#!/bin/sh\nexit 0\n' >tools/runme
chmod 755 tools/runme
printf 'data\n' >apps/x/results/out.txt
printf '# Title\n' >apps/x/README.md

fail() { echo "add_spdx_test: $*" >&2; exit 1; }
expect_line() { # FILE LINE_NUMBER TEXT
  local got
  got=$(sed -n "$2p" "$1")
  [[ $got == "$3" ]] || fail "$1 line $2 is '$got', expected '$3'"
}

bash scripts/add-spdx --check >/dev/null 2>&1 && fail "--check passed on a tree lacking SPDX lines"
bash scripts/add-spdx >first.log
slash='// SPDX-License-Identifier: Apache-2.0'
hash='# SPDX-License-Identifier: Apache-2.0'
for f in runtime/src/a.cpp runtime/src/a.hpp runtime/src/c.h runtime/src/j.S; do
  expect_line "$f" 1 "$slash"
done
expect_line runtime/src/a.cpp 2 '#include <x>'
expect_line runtime/CMakeLists.txt 1 "$hash"
expect_line tests/util.cmake 1 "$hash"
# Scripts: after the shebang's comment block, so "sed -n 2,3p" help text is unchanged.
expect_line tests/t.sh 1 '#!/usr/bin/env bash'
expect_line tests/t.sh 3 '#   help line'
expect_line tests/t.sh 4 "$hash"
expect_line tests/t.sh 5 'set -e'
expect_line tools/runme 2 "$hash"
[[ $(stat -c %a tools/runme) == 755 ]] || fail "tools/runme lost its mode"
# Left alone: a file with its own identifier, data and Markdown.
[[ $(cat runtime/src/has.cpp) == $'// SPDX-License-Identifier: MIT\nint h();' ]] || fail "has.cpp was changed"
[[ $(cat apps/x/results/out.txt) == data ]] || fail "a .txt data file was changed"
[[ $(cat apps/x/README.md) == '# Title' ]] || fail "a Markdown file was changed"
[[ $(wc -l <first.log) -eq 8 ]] || fail "expected 8 changed files, the script listed: $(cat first.log)"

before=$(find . -type f ! -name '*.log' -exec md5sum {} + | sort)
bash scripts/add-spdx >second.log
[[ ! -s second.log ]] || fail "a second run changed: $(cat second.log)"
after=$(find . -type f ! -name '*.log' -exec md5sum {} + | sort)
[[ $before == "$after" ]] || fail "a second run changed file contents"
bash scripts/add-spdx --check || fail "--check failed after the run"
echo "add_spdx_test: passed"
