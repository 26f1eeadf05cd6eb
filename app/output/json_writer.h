#pragma once
// A small streaming JSON writer: enough for results files, deterministic formatting
// (integers exact, reals with fixed significant digits), no dependency.
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace fabricsim {

class JsonWriter {
 public:
  JsonWriter() = default;
  // Streams to `sink` as it goes, holding at most about kSpillBytes: a 100,000-GPU run's
  // results are hundreds of MB that need not sit in memory beside the run's own state.
  explicit JsonWriter(std::ostream& sink) : sink_(&sink) {}
  static constexpr std::size_t kSpillBytes = std::size_t{1} << 20;
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view k);
  JsonWriter& value(std::string_view v);
  JsonWriter& value(const char* v) { return value(std::string_view(v)); }
  JsonWriter& value(std::int64_t v);
  JsonWriter& value(std::uint64_t v);
  JsonWriter& value(int v) { return value(static_cast<std::int64_t>(v)); }
  JsonWriter& value(double v);
  JsonWriter& value(bool v);
  JsonWriter& null();

  // Without a sink: the whole text. With one: what is not yet written to it.
  const std::string& str() const { return out_; }
  // Writes what is held to the sink (with one).
  void flush();

 private:
  void before_value();
  void write_string(std::string_view v);
  void newline();
  std::string out_;
  std::ostream* sink_ = nullptr;
  std::vector<bool> first_;  // per open container: nothing written yet
  bool after_key_ = false;
};

}  // namespace fabricsim
