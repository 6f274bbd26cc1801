// The time the harness, the tuner and the benches' paired timing read: the steady clock, or a
// test's ManualClock, which moves only when told. A test kernel says how long it took instead of
// sleeping, so what a test asserts about which config wins or when a budget ends holds on any
// machine, however busy.
#pragma once

#include <atomic>

namespace rooftune {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual double Seconds() const = 0;  // from an arbitrary origin
  static const Clock& Steady();
};

class ManualClock final : public Clock {
 public:
  double Seconds() const override { return now_.load(std::memory_order_relaxed); }
  void Advance(double seconds) { now_.fetch_add(seconds, std::memory_order_relaxed); }

 private:
  std::atomic<double> now_{0};
};

}  // namespace rooftune
