#pragma once
// The few NVML C types that dvfsim uses, declared here because no nvml.h is
// installed on build machines. Layouts follow NVML's published header (and
// pynvml's ctypes definitions); only what the calls in nvml.h need is declared.
#include <cstdint>

extern "C" {

using nvmlReturn_t = int;  // 0 = NVML_SUCCESS
using nvmlDevice_t = struct nvmlDevice_st*;
using nvmlClockType_t = int;  // 0 graphics, 1 SM, 2 memory, 3 video

// nvmlValue_t: a union of 8 bytes.
union nvmlValue_t {
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  long long sllVal;
  unsigned short usVal;
};

// nvmlFieldValue_t: 40 bytes.
struct nvmlFieldValue_t {
  unsigned int fieldId;
  unsigned int scopeId;
  long long timestamp;    // microseconds
  long long latencyUsec;  // microseconds
  int valueType;          // nvmlValueType_t
  nvmlReturn_t nvmlReturn;
  nvmlValue_t value;
};

}  // extern "C"

namespace dvfsim::hw::nvml_const {

inline constexpr nvmlReturn_t kSuccess = 0;
inline constexpr nvmlReturn_t kErrorNotSupported = 3;
inline constexpr nvmlReturn_t kErrorNoPermission = 4;

inline constexpr nvmlClockType_t kClockGraphics = 0;
inline constexpr nvmlClockType_t kClockSm = 1;
inline constexpr nvmlClockType_t kClockMemory = 2;

inline constexpr unsigned kFieldPowerAverage = 185;  // NVML_FI_DEV_POWER_AVERAGE, mW
inline constexpr unsigned kFieldPowerInstant = 186;  // NVML_FI_DEV_POWER_INSTANT, mW

// nvmlValueType_t
inline constexpr int kValueDouble = 0;
inline constexpr int kValueUnsignedInt = 1;
inline constexpr int kValueUnsignedLong = 2;
inline constexpr int kValueUnsignedLongLong = 3;
inline constexpr int kValueSignedLongLong = 4;
inline constexpr int kValueSignedInt = 5;
inline constexpr int kValueUnsignedShort = 6;

}  // namespace dvfsim::hw::nvml_const

static_assert(sizeof(nvmlValue_t) == 8, "nvmlValue_t must be 8 bytes");
static_assert(sizeof(nvmlFieldValue_t) == 40, "nvmlFieldValue_t must be 40 bytes");
