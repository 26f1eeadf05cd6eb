#pragma once
#include <doctest/doctest.h>

// A purely relative tolerance: doctest's Approx also adds epsilon * 1.0 absolute slack by
// default, which makes "within 1%" of 0.5 really "within 3%".
inline doctest::Approx within(double expected, double relative) {
  return doctest::Approx(expected).epsilon(relative).scale(0);
}
