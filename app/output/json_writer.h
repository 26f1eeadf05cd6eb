#pragma once
// A small streaming JSON writer: enough for results files, deterministic formatting
// (integers exact, reals with fixed significant digits), no dependency.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fabricsim {

class JsonWriter {
 public:
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

  const std::string& str() const { return out_; }

 private:
  void before_value();
  void write_string(std::string_view v);
  void newline();
  std::string out_;
  std::vector<bool> first_;  // per open container: nothing written yet
  bool after_key_ = false;
};

}  // namespace fabricsim
