// SPDX-License-Identifier: Apache-2.0
// The machine a benchmark ran on (CPU model, CPUs, governor, load) and the JSON helpers the
// suite's programs share.
#pragma once

#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace weft_bench {

/// What a report says about the machine.
struct machine {
  std::string cpu_model = "unknown";
  double mhz = 0;
  int online_cpus = 0;
  int allowed_cpus = 0;
  std::string governor = "unavailable";
  std::string host = "unknown";
};

inline std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\n");
  const auto last = s.find_last_not_of(" \t\n");
  return first == std::string::npos ? "" : s.substr(first, last - first + 1);
}

/// The value of the first "key : value" line of /proc/cpuinfo whose key is `key`.
inline std::optional<std::string> cpuinfo_field(std::string_view key) {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    const auto colon = line.find(':');
    if (colon != std::string::npos && trim(line.substr(0, colon)) == key) {
      return trim(line.substr(colon + 1));
    }
  }
  return std::nullopt;
}

/// Describes this machine; `mask` is the set of CPUs the process may use.
inline machine describe_machine(const cpu_set_t& mask) {
  machine m;
  if (auto model = cpuinfo_field("model name")) m.cpu_model = *model;
  if (auto mhz = cpuinfo_field("cpu MHz")) m.mhz = std::strtod(mhz->c_str(), nullptr);
  m.online_cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  m.allowed_cpus = CPU_COUNT(&mask);
  std::ifstream gov("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  if (std::string g; std::getline(gov, g) && !trim(g).empty()) m.governor = trim(g);
  utsname u{};
  if (uname(&u) == 0) m.host = u.nodename;
  return m;
}

/// The 1, 5 and 15 minute load averages, as /proc/loadavg gives them ("unavailable" if unreadable).
inline std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  if (in >> a >> b >> c) return a + " " + b + " " + c;
  return "unavailable";
}

/// `s` as a JSON string literal, escaped by nlohmann-json. UTF-8 is written as it is; bytes that
/// are not UTF-8 become U+FFFD rather than make the report fail.
inline std::string json_string(std::string_view s) {
  return nlohmann::json(std::string(s))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

/// The local date and time in ISO 8601 form.
inline std::string local_date() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S%z", &tm);
  return buf;
}

}  // namespace weft_bench
