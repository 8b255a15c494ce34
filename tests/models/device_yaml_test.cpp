#include "models/device_yaml.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "models/cmos_power.h"
#include "models/roofline_overlap.h"
#include "sim/error.h"
#include "sim/model_registry.h"

namespace dvfsim {
namespace {

std::string h200_text() {
  std::ifstream in(std::string(DVFSIM_SOURCE_DIR) + "/models/devices/h200.yaml");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string error_of(const std::string& yaml) {
  try {
    load_device_yaml(yaml, "test.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

TEST(DeviceYaml, H200LoadsWithTheMeasuredClocks) {
  const LoadedDevice ld = load_device_yaml(h200_text(), "h200.yaml");
  const Device& d = ld.device;
  EXPECT_EQ(d.core_clocks_mhz.size(), 110u);
  EXPECT_EQ(d.core_clocks_mhz.front(), 345);
  EXPECT_EQ(d.core_clocks_mhz.back(), 1980);
  EXPECT_EQ(d.memory_clocks_mhz, (std::vector<std::int32_t>{2201, 3201}));
  EXPECT_DOUBLE_EQ(d.power_limit_w, 700.0);
  // 132 SMs x 4096 FLOP/clock x 1.485 GHz = 803 TFLOP/s; measured 788 is 98 % of it.
  EXPECT_NEAR(d.tensor_flops_per_s(1485) / 1e12, 802.9, 0.1);
  EXPECT_GE(ld.sources.size(), 29u);
  for (const auto& s : ld.sources) EXPECT_FALSE(s.source.empty()) << s.field;
}

TEST(DeviceYaml, TheKernelGapIsOptionalAndRangeChecked) {
  const Device d = load_device_yaml(h200_text(), "h200.yaml").device;
  EXPECT_DOUBLE_EQ(d.kernel_gap_ns, 900.0);
  EXPECT_DOUBLE_EQ(d.graph_kernel_gap_ns, 310.0);
  // Absent: 0 (not modelled).
  std::string t = h200_text();
  const auto at = t.find("  kernel_gap_ns:");
  t.erase(at, t.find('\n', at) + 1 - at);
  EXPECT_DOUBLE_EQ(load_device_yaml(t, "test.yaml").device.kernel_gap_ns, 0.0);
  const std::string e =
      error_of(replace(h200_text(), "kernel_gap_ns: {value: 900", "kernel_gap_ns: {value: -1"));
  EXPECT_NE(e.find("compute.kernel_gap_ns"), std::string::npos) << e;
}

// The SM's occupancy limits: all four or none (none: every grid's warps count
// as filling its SMs), whole numbers, each error naming its key and line.
TEST(DeviceYaml, TheSmOccupancyLimitsGoTogether) {
  const Device d = load_device_yaml(h200_text(), "h200.yaml").device;
  EXPECT_EQ(d.max_threads_per_sm, 2048);
  EXPECT_EQ(d.max_blocks_per_sm, 32);
  EXPECT_EQ(d.registers_per_sm, 65536);
  EXPECT_EQ(d.shared_memory_per_sm, 233472);
  std::string none = h200_text();
  for (const char* k :
       {"max_threads_per_sm", "max_blocks_per_sm", "registers_per_sm", "shared_memory_per_sm"}) {
    const auto at = none.find(std::string("  ") + k + ":");
    ASSERT_NE(at, std::string::npos) << k;
    none.erase(at, none.find('\n', at) + 1 - at);
  }
  EXPECT_EQ(load_device_yaml(none, "test.yaml").device.max_threads_per_sm, 0);
  std::string partial = h200_text();
  const auto at = partial.find("  registers_per_sm:");
  partial.erase(at, partial.find('\n', at) + 1 - at);
  const std::string e = error_of(partial);
  EXPECT_NE(e.find("field 'compute.registers_per_sm': missing: the SM's occupancy limits come "
                   "together"),
            std::string::npos)
      << e;
  const std::string frac = error_of(
      replace(h200_text(), "max_blocks_per_sm: {value: 32", "max_blocks_per_sm: {value: 32.5"));
  EXPECT_NE(
      frac.find("test.yaml:32: field 'compute.max_blocks_per_sm': 32.5 is not a whole number"),
      std::string::npos)
      << frac;
}

// The L2 residency keys of the roofline model go together, or not at all
// (absent: every byte is DRAM traffic), and the band must not be empty.
TEST(DeviceYaml, TheL2ResidencyKeysGoTogether) {
  auto erase_line = [](std::string t, const std::string& key) {
    const auto at = t.find("  " + key + ":");
    EXPECT_NE(at, std::string::npos) << key;
    if (at != std::string::npos) t.erase(at, t.find('\n', at) + 1 - at);
    return t;
  };
  auto roofline_error = [](const std::string& yaml) -> std::string {
    try {
      RooflineParams::of(load_device_yaml(yaml, "test.yaml").device);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_DOUBLE_EQ(RooflineParams::of(load_device_yaml(h200_text(), "h200.yaml").device).l2_bytes,
                   62914560.0);
  std::string none = h200_text();
  for (const char* k : {"l2_bytes", "l2_resident_below", "l2_resident_above", "l2_hit_dram_power"})
    none = erase_line(none, k);
  const RooflineParams off = RooflineParams::of(load_device_yaml(none, "test.yaml").device);
  EXPECT_DOUBLE_EQ(off.dram_power_share(1.0), 1.0);
  const std::string partial = roofline_error(erase_line(h200_text(), "l2_hit_dram_power"));
  EXPECT_NE(partial.find("test.yaml: latency: the L2 residency keys go together"),
            std::string::npos)
      << partial;
  const std::string empty = roofline_error(
      replace(h200_text(), "l2_resident_above: {value: 0.92", "l2_resident_above: {value: 0.4"));
  EXPECT_NE(empty.find("l2_resident_below (0.5) must be less than l2_resident_above (0.4)"),
            std::string::npos)
      << empty;
}

TEST(DeviceYaml, VoltageCurveIsMonotoneAndInterpolates) {
  const Device d = load_device_yaml(h200_text(), "h200.yaml").device;
  double last = 0;
  for (auto f : d.core_clocks_mhz) {
    EXPECT_GE(d.volts(f), last) << f;
    last = d.volts(f);
  }
  // Flat floor 0.738 V to the knee at 851 MHz, then linear to 1.00 V at 1980 MHz.
  EXPECT_DOUBLE_EQ(d.volts(345), 0.738182);
  EXPECT_DOUBLE_EQ(d.volts(851), 0.738182);
  EXPECT_NEAR(d.volts(1440), 0.875, 0.001);  // on the line from 851 to 1980 MHz
  EXPECT_DOUBLE_EQ(d.volts(1980), 1.00);
}

TEST(DeviceYaml, NumberWithoutSourceIsRejectedNamingTheField) {
  const std::string e = error_of(
      replace(h200_text(), "sm_count: {value: 132, source:", "sm_count: {value: 132, note:"));
  EXPECT_NE(e.find("compute.sm_count"), std::string::npos) << e;
  EXPECT_NE(e.find("without a source"), std::string::npos) << e;
}

TEST(DeviceYaml, SourceMustSayWhatKindItIs) {
  const std::string e =
      error_of(replace(h200_text(), "source: \"measured: NVML power limit", "source: \"trust me"));
  EXPECT_NE(e.find("power.limit_w.source"), std::string::npos) << e;
}

TEST(DeviceYaml, NonMonotoneVoltageCurveIsRejected) {
  const std::string e = error_of(replace(h200_text(), "[1980, 1.00]", "[1980, 0.60]"));
  EXPECT_NE(e.find("not monotone"), std::string::npos) << e;
}

TEST(DeviceYaml, UnknownKeyIsRejectedWithTheValidOnes) {
  const std::string e = error_of(replace(
      h200_text(), "  limit_w:", "  limt_w: {value: 1, source: \"assumption: x\"}\n  limit_w:"));
  EXPECT_NE(e.find("power.limt_w"), std::string::npos) << e;
  EXPECT_NE(e.find("limit_w"), std::string::npos) << e;
}

TEST(DeviceYaml, DefaultClocksMustBeSupported) {
  const std::string e =
      error_of(replace(h200_text(), "default: {core_mhz: 1980", "default: {core_mhz: 1990"));
  EXPECT_NE(e.find("clocks.default"), std::string::npos) << e;
  EXPECT_NE(e.find("1990"), std::string::npos) << e;
}

TEST(DeviceYaml, InvalidYamlNamesFileAndLine) {
  const std::string e = error_of("name: x\n  - [\n");
  EXPECT_NE(e.find("test.yaml:"), std::string::npos) << e;
}

TEST(DeviceYaml, UnknownDeviceListsTheKnownOnes) {
  try {
    load_device("no-such-gpu");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("h200"), std::string::npos) << e.what();
  }
}

TEST(DeviceYaml, ModelsArePickedByName) {
  const Device d = load_device_yaml(h200_text(), "h200.yaml").device;
  EXPECT_EQ(d.latency.model, "roofline-overlap");
  EXPECT_EQ(d.power.model, "cmos");
  EXPECT_EQ(d.governor.model, "native");
  // The numbers reach the model as written: 432.824 W/(V^2 GHz) tensor, 0.70 data share.
  const CmosParams p = CmosParams::of(d);
  EXPECT_DOUBLE_EQ(p.compute_w_per_v2ghz, 432.824);
  EXPECT_DOUBLE_EQ(p.data_share_memory, 0.70);
  EXPECT_DOUBLE_EQ(p.deep_idle_w, 79.34);
}

TEST(DeviceYaml, UnknownModelIsRejectedWithTheKnownOnes) {
  const std::string e = error_of(replace(h200_text(), "model: cmos", "model: cmoss"));
  EXPECT_NE(e.find("test.yaml:"), std::string::npos) << e;
  EXPECT_NE(e.find("power.model"), std::string::npos) << e;
  EXPECT_NE(e.find("'cmoss'"), std::string::npos) << e;
  EXPECT_NE(e.find("known: cmos"), std::string::npos) << e;
}

TEST(DeviceYaml, MissingModelNameIsRejected) {
  const std::string e = error_of(replace(h200_text(), "  model: native", "  # no model"));
  EXPECT_NE(e.find("governor.model"), std::string::npos) << e;
  EXPECT_NE(e.find("missing"), std::string::npos) << e;
}

TEST(DeviceYaml, AModelsMissingParameterIsNamed) {
  std::string t = h200_text();
  const auto at = t.find("  simt_w_per_v2ghz:");
  t.erase(at, t.find('\n', at) - at + 1);
  const std::string e = error_of(t);
  EXPECT_NE(e.find("power.simt_w_per_v2ghz"), std::string::npos) << e;
  EXPECT_NE(e.find("cmos"), std::string::npos) << e;
}

TEST(DeviceYaml, AModelParameterOutsideItsDeclaredRangeIsRejected) {
  // native declares target_fraction in [0.5, 1].
  const std::string e = error_of(
      replace(h200_text(), "target_fraction: {value: 1.0,", "target_fraction: {value: 1.5,"));
  EXPECT_NE(e.find("governor.target_fraction"), std::string::npos) << e;
  EXPECT_NE(e.find("outside [0.5, 1]"), std::string::npos) << e;
}

// A capture-only device file: no power, governor or switch latencies. It
// loads (a trace captured on it can be retargeted) but cannot be simulated.
TEST(DeviceYaml, ACaptureOnlyDeviceLoadsButIsNotSimulated) {
  std::string t = h200_text();
  t.erase(t.find("\npower:"));
  const Device d = load_device_yaml(t, "capture.yaml").device;
  EXPECT_FALSE(d.power.given());
  EXPECT_EQ(d.power_limit_w, 0.0);
  try {
    make_power_model(d);
    FAIL();
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("capture.yaml"), std::string::npos) << m;
    EXPECT_NE(m.find("power"), std::string::npos) << m;
    EXPECT_NE(m.find("capture only"), std::string::npos) << m;
  }
  // With power but no governor the file is incomplete.
  std::string half = h200_text();
  half.erase(half.find("\ngovernor:"));
  const std::string e = error_of(half);
  EXPECT_NE(e.find("'governor'"), std::string::npos) << e;
}

// A model registered outside models/ plugs in the same way: its own keys in
// the device file, built by name.
class FlatPower final : public PowerModel {
 public:
  explicit FlatPower(const Device& d)
      : w_(model_params(d, ModelKind::power, "test-flat").number("watts")) {}
  double power_w(const Utilisation& u, const Clocks&) const override { return w_ * (1 + u.busy); }
  double deep_idle_w() const override { return w_ / 2; }

 private:
  double w_;
};
const bool flat_registered = register_model({
    .kind = ModelKind::power,
    .name = "test-flat",
    .description = "test: watts idle, twice that busy",
    .params = {{"watts", true, 1, 1000, "idle power (W)"}},
    .make_latency = {},
    .make_power = [](const Device& d, const ModelOptions&) -> std::unique_ptr<PowerModel> {
      return std::make_unique<FlatPower>(d);
    },
    .make_governor = {},
});

TEST(ModelRegistry, ARegisteredModelReadsItsOwnKeysFromTheDeviceFile) {
  ASSERT_TRUE(flat_registered);
  std::string t = h200_text();
  const auto begin = t.find("\npower:");
  const auto end = t.find("\ngovernor:");
  t.replace(begin, end - begin,
            "\npower:\n  model: test-flat\n"
            "  limit_w: {value: 700, source: \"assumption: test\"}\n"
            "  watts: {value: 100, source: \"assumption: test\"}\n");
  const Device d = load_device_yaml(t, "flat.yaml").device;
  const auto p = make_power_model(d);
  const Clocks c = make_clocks(d, 1980, 3201);
  EXPECT_DOUBLE_EQ(p->power_w({}, c), 100.0);
  EXPECT_DOUBLE_EQ(p->power_w({1.0, 0, 0, 0}, c), 200.0);  // busy: 2 x 100 W
  EXPECT_DOUBLE_EQ(p->deep_idle_w(), 50.0);
  // cmos keys are not test-flat's.
  const std::string e = error_of(
      replace(t, "  watts:", "  const_w: {value: 1, source: \"assumption: x\"}\n  watts:"));
  EXPECT_NE(e.find("power.const_w"), std::string::npos) << e;
  EXPECT_NE(e.find("watts"), std::string::npos) << e;
  // A model of one kind is not found under another.
  EXPECT_THROW(find_model(ModelKind::latency, "test-flat"), InputError);
}

}  // namespace
}  // namespace dvfsim
