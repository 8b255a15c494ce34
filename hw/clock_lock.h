#pragma once
// Owns locked clocks and power limits on some GPUs: writes the marker before the
// first change and, on reset() or destruction, restores default clocks and the
// power limits the GPUs had before, then removes the marker.
#include <string>
#include <vector>

#include "hw/marker.h"
#include "hw/plan.h"

namespace dvfsim::hw {

class Nvml;

class ClockLock {
 public:
  // Writes the marker (at marker_path) naming this process and `gpus`.
  ClockLock(const Nvml& nvml, std::vector<unsigned> gpus, std::string marker_path);
  // Resets if still active; failures are printed to stderr (the marker then stays
  // for the next hw command to retry).
  ~ClockLock();
  ClockLock(const ClockLock&) = delete;
  ClockLock& operator=(const ClockLock&) = delete;

  // Locks core (min = max = core_mhz) and, if memory_mhz > 0, memory clocks on
  // every GPU.
  void set(const ClockSetting& clocks);
  // Locks one domain only (min = max = mhz), leaving the other as it is.
  void set_core(unsigned mhz);
  void set_memory(unsigned mhz);
  // Sets the board power limit of every GPU to `watts`, first recording each
  // GPU's current limit in the marker so that reset() (or, if this process
  // dies, the next hw command) puts it back.
  void set_power_limit(int watts);
  // Restores default clocks on every GPU and removes the marker. Throws the first
  // failure (after trying every GPU), leaving the marker. Does nothing if already reset.
  void reset();
  bool active() const { return active_; }
  int changes() const { return changes_; }

 private:
  const Nvml& nvml_;
  std::vector<unsigned> gpus_;
  std::string marker_path_;
  Marker marker_;
  bool active_ = true;
  bool reset_failed_ = false;
  int changes_ = 0;
};

}  // namespace dvfsim::hw
