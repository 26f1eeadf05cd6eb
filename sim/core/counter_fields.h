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
  // A port's traffic classes: a time they spend side by side (paused, waiting for
  // credits), so a port's figure is its longest class's, not their sum.
  bool longest_of_classes = false;
  bool credit_only = false;  // kept (and written) only on credit-based links
};

// total += c, field by field (max for high-water marks).
template <typename Counters>
void add_counters(Counters& total, const Counters& c) {
  Counters::for_each_field(
      [](const CounterField& field, auto& t, const auto& v) { t = field.is_max ? std::max(t, v) : t + v; }, total, c);
}

// A port's total over its classes, field by field: a sum, or the most for high-water
// marks and for times the classes spend side by side.
template <typename Counters>
void add_class_counters(Counters& port, const Counters& traffic_class) {
  Counters::for_each_field(
      [](const CounterField& field, auto& t, const auto& v) { t = field.is_max || field.longest_of_classes ? std::max(t, v) : t + v; },
      port, traffic_class);
}

}  // namespace fabricsim
