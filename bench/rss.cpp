// SPDX-License-Identifier: Apache-2.0
// weft_bench_rss: runs one peer case in a child process and reports the child's peak resident set.
//
//   weft_bench_rss PROGRAM ARGS...
//
// Copies the child's stdout, then, for each "raw" line in it, prints
//   rss  PEER  BENCH  N  STREAMS  MAXRSS_KB
// with the peak RSS (getrusage RUSAGE_CHILDREN ru_maxrss, of the largest descendant) of the one
// child it ran. One process per measurement, so that no earlier case's memory is counted. Exits
// with the child's status (128+signal if it was killed).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PROGRAM ARGS...\n", argv[0]);
    return 2;
  }
  int out[2];
  if (pipe(out) != 0) {
    std::perror("weft_bench_rss: pipe");
    return 1;
  }
  const pid_t pid = fork();
  if (pid < 0) {
    std::perror("weft_bench_rss: fork");
    return 1;
  }
  if (pid == 0) {
    dup2(out[1], 1);
    close(out[0]);
    close(out[1]);
    execvp(argv[1], argv + 1);
    std::fprintf(stderr, "weft_bench_rss: cannot run %s: %s\n", argv[1], std::strerror(errno));
    _exit(127);
  }
  close(out[1]);
  std::string text;
  char buf[4096];
  for (ssize_t got; (got = read(out[0], buf, sizeof buf)) != 0;) {
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) break;
    text.append(buf, static_cast<std::size_t>(got));
  }
  close(out[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  rusage usage{};
  getrusage(RUSAGE_CHILDREN, &usage);
  std::fputs(text.c_str(), stdout);
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string x; std::getline(fields, x, '\t');) f.push_back(x);
    if (f.size() >= 5 && f[0] == "raw") {
      std::printf("rss\t%s\t%s\t%s\t%s\t%ld\n", f[1].c_str(), f[2].c_str(), f[3].c_str(),
                  f[4].c_str(), usage.ru_maxrss);
    }
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}
