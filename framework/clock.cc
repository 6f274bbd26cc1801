#include "framework/clock.h"

#include <chrono>

namespace rooftune {
namespace {

class SteadyClock final : public Clock {
 public:
  double Seconds() const override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

}  // namespace

const Clock& Clock::Steady() {
  static const SteadyClock clock;
  return clock;
}

}  // namespace rooftune
