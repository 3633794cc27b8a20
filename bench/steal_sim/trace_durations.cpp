// SPDX-License-Identifier: Apache-2.0
// read_trace_durations() and sampled_work() of trace_durations.hpp.
#include "trace_durations.hpp"

#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "rng.hpp"

namespace weft::steal_sim {

std::vector<sim_ns> read_trace_durations(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("steal_sim: cannot open the trace " + path);
  const auto fail = [&](const std::string& why) {
    throw std::runtime_error("steal_sim: " + path + ": " + why);
  };
  nlohmann::json doc;
  try {
    in >> doc;
  } catch (const nlohmann::json::exception& e) {
    fail(std::string("not JSON: ") + e.what());
  }
  const nlohmann::json* events = &doc;
  if (doc.is_object()) {
    if (!doc.contains("traceEvents")) fail("no \"traceEvents\"");
    events = &doc["traceEvents"];
  }
  if (!events->is_array()) fail("the trace events are not an array");
  std::map<std::uint64_t, std::size_t> slot;  // unit id -> index in `out`
  std::vector<sim_ns> out;
  for (const auto& e : *events) {
    if (!e.is_object() || e.value("ph", "") != "X") continue;
    const std::string cat = e.value("cat", "");
    if (cat != "ult" && cat != "tasklet") continue;
    const auto args = e.find("args");
    const auto dur = e.find("dur");
    if (args == e.end() || !args->is_object() || !args->contains("id") || dur == e.end() ||
        !dur->is_number() || !(*args)["id"].is_number_unsigned())
      fail("a unit run without a numeric \"dur\" and \"args\".\"id\"");
    const double us = dur->get<double>();
    if (!(us >= 0)) fail("a negative run time");
    const auto id = (*args)["id"].get<std::uint64_t>();
    const auto [it, fresh] = slot.try_emplace(id, out.size());
    if (fresh) out.push_back(0);
    out[it->second] += static_cast<sim_ns>(std::llround(us * 1000.0));
  }
  if (out.empty()) fail("no unit run slices (\"X\" events of category \"ult\" or \"tasklet\")");
  return out;
}

work_time sampled_work(std::vector<sim_ns> durations, std::uint64_t seed) {
  if (durations.empty()) throw std::invalid_argument("steal_sim: no durations to draw from");
  auto shared = std::make_shared<const std::vector<sim_ns>>(std::move(durations));
  return [shared, seed](std::int64_t index) {
    splitmix64 rng(seed ^ (static_cast<std::uint64_t>(index) * 0xD1B54A32D192ED03ull));
    return (*shared)[rng.below(shared->size())];
  };
}

}  // namespace weft::steal_sim
