// SPDX-License-Identifier: Apache-2.0
// Configuration: defaults, WEFT_* environment variables, validation, and the affinity syntax.
#include "weft/config.hpp"

#include <signal.h>

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "platform/assert.hpp"
#include "weft/error.hpp"
#include "weft/rm_protocol.hpp"

namespace weft {

namespace {

constexpr long long max_park_limit_ms = 3'600'000;  // an hour
/// Most places a list may expand to: a stream takes place rank modulo the count, and no more
/// streams than rm::max_count can exist.
constexpr std::size_t max_places = rm::max_count;
/// Most CPU numbers one place may list (CPU numbers are below 65536, so more only repeats).
constexpr std::size_t max_place_cpus = 65536;
/// Most CPU numbers a whole list may expand to (4 MiB of ints), so that a short string cannot
/// make init allocate gigabytes.
constexpr std::size_t max_total_cpus = std::size_t{1} << 20;

[[noreturn]] void bad_value(std::string_view origin, std::string_view text,
                            std::string_view expected) {
  throw error(errc::invalid_config, "weft: " + std::string(origin) + "='" + std::string(text) +
                                        "' is not valid: expected " + std::string(expected));
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

long long parse_integer(std::string_view origin, std::string_view text, long long lo,
                        long long hi) {
  detail::assert_invariant([lo, hi] { return lo <= hi; },
                           "config: an integer setting's range is not empty");
  const std::string_view t = trim(text);
  long long value = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (t.empty() || ec != std::errc() || end != t.data() + t.size() || value < lo || value > hi) {
    bad_value(origin, text, "an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
  }
  return value;
}

bool parse_bool(std::string_view origin, std::string_view text) {
  const std::string_view t = trim(text);
  if (t == "1" || t == "true" || t == "yes" || t == "on") return true;
  if (t == "0" || t == "false" || t == "no" || t == "off") return false;
  bad_value(origin, text, "1/0, true/false, yes/no or on/off");
}

/// The signals WEFT_DUMP_SIGNAL accepts: ones a user sends on purpose and no part of weft uses
/// (SIGQUIT is the conventional "dump your state" request, as in Go and the JVM).
struct signal_name {
  const char* name;
  int number;
};
constexpr signal_name dump_signals[] = {{"HUP", SIGHUP},    {"INT", SIGINT},   {"QUIT", SIGQUIT},
                                        {"USR1", SIGUSR1},  {"USR2", SIGUSR2}, {"TERM", SIGTERM},
                                        {"WINCH", SIGWINCH}};
constexpr const char* dump_signals_expected =
    "none or one of SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2, SIGTERM, SIGWINCH (a name or "
    "its number)";

const char* dump_signal_name(int sig) noexcept {
  for (const signal_name& s : dump_signals)
    if (s.number == sig) return s.name;
  return nullptr;
}

int parse_signal(std::string_view origin, std::string_view text) {
  std::string t(trim(text));
  for (char& c : t) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (t == "NONE" || t == "0" || t == "OFF") return 0;
  if (t.rfind("SIG", 0) == 0) t.erase(0, 3);
  for (const signal_name& s : dump_signals)
    if (t == s.name) return s.number;
  int number = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), number);
  if (!t.empty() && ec == std::errc() && end == t.data() + t.size() && dump_signal_name(number))
    return number;
  bad_value(origin, text, dump_signals_expected);
}

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v;
}

/// Recursive-descent parser for the OMP_PLACES-style place list.
class places_parser {
 public:
  places_parser(std::string_view text, std::string_view origin) : text_(text), origin_(origin) {}

  std::vector<std::vector<int>> parse() {
    std::vector<std::vector<int>> out;
    do {
      skip_space();
      std::vector<int> place;
      if (peek() == '{') {
        ++pos_;
        do {
          skip_space();
          const int first = number();
          auto [len, stride] = repeat();
          if (static_cast<std::size_t>(len) > max_place_cpus - place.size())
            too_large("a place lists more than " + std::to_string(max_place_cpus) + " CPUs");
          for (int i = 0; i < len; ++i) place.push_back(checked(first + i * stride));
          skip_space();
        } while (accept(','));
        expect('}');
      } else {
        place.push_back(number());
      }
      auto [len, stride] = repeat();
      if (static_cast<std::size_t>(len) > max_places - out.size())
        too_large("the list has more than " + std::to_string(max_places) + " places");
      if (place.size() * static_cast<std::size_t>(len) > max_total_cpus - total_)
        too_large("the places list more than " + std::to_string(max_total_cpus) + " CPUs in all");
      total_ += place.size() * static_cast<std::size_t>(len);
      for (int i = 0; i < len; ++i) {
        std::vector<int> shifted;
        shifted.reserve(place.size());
        for (int c : place) shifted.push_back(checked(c + i * stride));
        out.push_back(std::move(shifted));
      }
      skip_space();
    } while (accept(','));
    skip_space();
    if (pos_ != text_.size()) fail();
    if (out.empty()) fail();
    detail::assert_invariant(
        [this, &out] { return out.size() <= max_places && total_ <= max_total_cpus; },
        "config: a place list stays within the bounds it was parsed against");
    return out;
  }

 private:
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_space() {
    while (std::isspace(static_cast<unsigned char>(peek()))) ++pos_;
  }
  bool accept(char c) {
    skip_space();
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  void expect(char c) {
    if (!accept(c)) fail();
  }
  int number(bool allow_negative = false) {
    skip_space();
    bool negative = false;
    if (allow_negative && peek() == '-') {
      negative = true;
      ++pos_;
    }
    if (!std::isdigit(static_cast<unsigned char>(peek()))) fail();
    long long v = 0;
    while (std::isdigit(static_cast<unsigned char>(peek()))) {
      v = v * 10 + (text_[pos_++] - '0');
      if (v > 65535) fail();
    }
    return static_cast<int>(negative ? -v : v);
  }
  /// Optional ":len[:stride]".
  std::pair<int, int> repeat() {
    int len = 1, stride = 1;
    if (accept(':')) {
      len = number();
      if (len < 1) fail();
      if (accept(':')) stride = number(true);
    }
    return {len, stride};
  }
  int checked(int cpu) {
    if (cpu < 0 || cpu > 65535) fail();
    return cpu;
  }
  [[noreturn]] void fail() {
    bad_value(origin_, text_,
              "none, compact, scatter or a place list such as {0,1},{2,3} or 0:4:2");
  }
  [[noreturn]] void too_large(const std::string& why) {
    bad_value(origin_, text_, "a place list of bounded size (" + why + ")");
  }

  std::string_view text_;
  std::string_view origin_;
  std::size_t pos_ = 0;
  std::size_t total_ = 0;  // CPU numbers in `out` so far
};

}  // namespace

std::size_t parse_size(std::string_view text, std::string_view origin) {
  std::string_view t = trim(text);
  std::size_t multiplier = 1;
  if (!t.empty()) {
    switch (std::toupper(static_cast<unsigned char>(t.back()))) {
      case 'K':
        multiplier = 1024;
        break;
      case 'M':
        multiplier = 1024 * 1024;
        break;
      case 'G':
        multiplier = 1024 * 1024 * 1024;
        break;
      default:
        break;
    }
    if (multiplier != 1) t.remove_suffix(1);
  }
  unsigned long long value = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (t.empty() || ec != std::errc() || end != t.data() + t.size() || value == 0 ||
      value > std::numeric_limits<std::size_t>::max() / multiplier) {
    bad_value(origin, text, "a size in bytes, optionally with a K, M or G suffix");
  }
  return static_cast<std::size_t>(value) * multiplier;
}

affinity_policy affinity_policy::parse(std::string_view text, std::string_view origin) {
  const std::string_view t = trim(text);
  affinity_policy p;
  if (t == "none") {
    p.how = kind::none;
  } else if (t == "compact") {
    p.how = kind::compact;
  } else if (t == "scatter") {
    p.how = kind::scatter;
  } else {
    p.how = kind::places;
    p.places = places_parser(text, origin).parse();
  }
  return p;
}

std::string affinity_policy::to_string() const {
  switch (how) {
    case kind::none:
      return "none";
    case kind::compact:
      return "compact";
    case kind::scatter:
      return "scatter";
    case kind::places:
      break;
  }
  std::string out;
  for (const auto& place : places) {
    if (!out.empty()) out += ',';
    out += '{';
    for (std::size_t i = 0; i < place.size(); ++i) out += (i ? "," : "") + std::to_string(place[i]);
    out += '}';
  }
  return out;
}

void config::apply_environment() {
  if (const char* v = env("WEFT_NUM_STREAMS")) {
    num_streams = static_cast<int>(parse_integer("WEFT_NUM_STREAMS", v, 1, 4096));
  }
  if (const char* v = env("WEFT_STACK_SIZE")) stack_size = parse_size(v, "WEFT_STACK_SIZE");
  if (const char* v = env("WEFT_STACK_RESERVE"))
    stack_reserve = trim(v) == "0" ? 0 : parse_size(v, "WEFT_STACK_RESERVE");
  if (const char* v = env("WEFT_STACK_GUARDS")) {
    stack_guards = trim(v) == "auto" ? -1 : parse_integer("WEFT_STACK_GUARDS", v, 0, 1L << 40);
  }
  if (const char* v = env("WEFT_AFFINITY")) affinity = affinity_policy::parse(v, "WEFT_AFFINITY");
  if (const char* v = env("WEFT_SCHED")) {
    const std::string_view t = trim(v);
    if (t.empty()) bad_value("WEFT_SCHED", v, "a scheduler name such as basic");
    scheduler = std::string(t);
  }
  if (const char* v = env("WEFT_EVENT_FREQ")) {
    event_freq = static_cast<unsigned>(parse_integer("WEFT_EVENT_FREQ", v, 1, 1 << 20));
  }
  if (const char* v = env("WEFT_IDLE_SPIN")) {
    idle_spin = static_cast<unsigned>(parse_integer("WEFT_IDLE_SPIN", v, 0, 1 << 24));
  }
  if (const char* v = env("WEFT_PARK_LIMIT_MS")) {
    park_limit_ms =
        static_cast<unsigned>(parse_integer("WEFT_PARK_LIMIT_MS", v, 1, max_park_limit_ms));
  }
  if (const char* v = env("WEFT_PRINT_CONFIG")) print = parse_bool("WEFT_PRINT_CONFIG", v);
  if (const char* v = env("WEFT_DUMP_SIGNAL")) dump_signal = parse_signal("WEFT_DUMP_SIGNAL", v);
  // Set but empty turns tracing off, even a trace the program configured: shells and job
  // scripts write `WEFT_TRACE=` to mean "no trace".
  if (const char* v = env("WEFT_TRACE")) trace = std::string(trim(v));
  if (const char* v = env("WEFT_STATS")) stats = parse_bool("WEFT_STATS", v);
  if (const char* v = env("WEFT_RM")) {
    resource_manager = std::string(trim(v));
    (void)rm::parse_address(resource_manager, "WEFT_RM");
  }
}

void config::validate() const {
  if (num_streams < 0 || num_streams > 4096) {
    throw error(errc::invalid_config, "weft: num_streams " + std::to_string(num_streams) +
                                          " is out of range (0 = one per CPU, at most 4096)");
  }
  if (stack_size < 4096 || stack_size > (std::size_t{1} << 30)) {
    throw error(errc::invalid_config, "weft: stack_size " + std::to_string(stack_size) +
                                          " is out of range (4 KiB to 1 GiB)");
  }
  if (stack_reserve > (std::size_t{1} << 30)) {
    throw error(errc::invalid_config, "weft: stack_reserve " + std::to_string(stack_reserve) +
                                          " is out of range (0 to 1 GiB)");
  }
  if (stack_guards < -1) {
    throw error(errc::invalid_config, "weft: stack_guards " + std::to_string(stack_guards) +
                                          " is out of range (-1 = automatic, or a count)");
  }
  if (event_freq == 0) throw error(errc::invalid_config, "weft: event_freq must be at least 1");
  if (park_limit_ms == 0 || park_limit_ms > max_park_limit_ms) {
    throw error(errc::invalid_config, "weft: park_limit_ms " + std::to_string(park_limit_ms) +
                                          " is out of range (1 to 3600000)");
  }
  if (scheduler.empty()) throw error(errc::invalid_config, "weft: scheduler name is empty");
  if (affinity.how == affinity_policy::kind::places && affinity.places.empty()) {
    throw error(errc::invalid_config, "weft: an explicit affinity needs at least one place");
  }
  if (!resource_manager.empty()) (void)rm::parse_address(resource_manager, "resource_manager");
  if (dump_signal != 0 && !dump_signal_name(dump_signal)) {
    throw error(errc::invalid_config, "weft: dump_signal " + std::to_string(dump_signal) +
                                          " is not valid: expected 0 (none) or one of SIGHUP, "
                                          "SIGINT, SIGQUIT, SIGUSR1, SIGUSR2, SIGTERM, SIGWINCH");
  }
}

std::string config::describe() const {
  // Every config the runtime describes went through validate() or parse_signal().
  detail::assert_invariant([this] { return dump_signal == 0 || dump_signal_name(dump_signal); },
                           "config: dump_signal is 0 or a signal WEFT_DUMP_SIGNAL accepts");
  std::ostringstream out;
  out << "num_streams = " << num_streams << "\n"
      << "stack_size = " << stack_size << "\n"
      << "stack_reserve = " << stack_reserve << "\n"
      << "stack_guards = ";
  if (stack_guards < 0) {
    out << "auto";
  } else {
    out << stack_guards;
  }
  out << "\n"
      << "affinity = " << affinity.to_string() << "\n"
      << "scheduler = " << scheduler << "\n"
      << "event_freq = " << event_freq << "\n"
      << "idle_spin = " << idle_spin << "\n"
      << "park_limit_ms = " << park_limit_ms << "\n"
      << "print = " << (print ? 1 : 0) << "\n"
      << "resource_manager = " << (resource_manager.empty() ? "none" : resource_manager) << "\n"
      << "dump_signal = "
      << (dump_signal ? std::string("SIG") + dump_signal_name(dump_signal) : std::string("none"))
      << "\n"
      << "trace = " << (trace.empty() ? "none" : trace) << "\n"
      << "stats = " << (stats ? 1 : 0) << "\n";
  return out.str();
}

}  // namespace weft
