#pragma once
// A component's counters list their fields once, beside the fields:
//   template <typename F, typename... C> static void for_each_field(F&& f, C&... c)
// calls f(CounterField, the field of each c...) for every field, in order. Summing,
// writing results and comparing runs iterate that list, so a new counter is one field
// and one line there, and nothing in app/.
#include <algorithm>

namespace fabricsim {

struct CounterField {
  const char* name;      // its key in results.json
  bool is_max = false;   // a high-water mark: combined by max, not summed
};

// total += c, field by field (max for high-water marks).
template <typename Counters>
void add_counters(Counters& total, const Counters& c) {
  Counters::for_each_field(
      [](const CounterField& field, auto& t, const auto& v) { t = field.is_max ? std::max(t, v) : t + v; }, total, c);
}

}  // namespace fabricsim
