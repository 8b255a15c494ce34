// The GPU-to-GPU links. Bandwidths are the vendors' per-direction figures
// (docs/parallel.md, "Links", repeats them with their sources); latencies
// are the one-way small-message latencies reported for each fabric, labelled
// as assumptions where no vendor figure exists.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "parallel/job.h"
#include "sim/error.h"

namespace dvfsim {
namespace {

const std::vector<Link>& links() {
  static const std::vector<Link> all = {
      // NVIDIA A100 datasheet: third-generation NVLink, 600 GB/s total (both
      // directions) per GPU = 300 GB/s each way.
      {"nvlink3", 300.0, 2.0},
      // NVIDIA H100/H200 datasheets: fourth-generation NVLink, 900 GB/s total
      // = 450 GB/s each way.
      {"nvlink4", 450.0, 2.0},
      // NVIDIA B200 (DGX B200) datasheet: fifth-generation NVLink, 1.8 TB/s
      // total = 900 GB/s each way.
      {"nvlink5", 900.0, 2.0},
      // PCI Express 3.0/4.0/5.0 x16: 8/16/32 GT/s per lane, 128b/130b
      // coding: 15.75/31.5/63 GB/s each way.
      {"pcie3", 15.75, 5.0},
      {"pcie4", 31.5, 5.0},
      {"pcie5", 63.0, 5.0},
      // InfiniBand HDR 200 Gb/s and NDR 400 Gb/s per adapter (NVIDIA
      // ConnectX-6/-7 datasheets): 25 and 50 GB/s each way.
      {"ib-hdr", 25.0, 5.0},
      {"ib-ndr", 50.0, 5.0},
  };
  return all;
}

}  // namespace

std::int64_t Link::transfer_ns(double bytes) const {
  if (bytes <= 0) return 0;
  return static_cast<std::int64_t>(std::llround(latency_us * 1e3 + bytes / bandwidth_gb_s));
}

std::vector<const Link*> all_links() {
  std::vector<const Link*> out;
  for (const Link& l : links()) out.push_back(&l);
  return out;
}

const Link& find_link(const std::string& name) {
  for (const Link& l : links())
    if (l.name == name) return l;
  std::string known;
  for (const Link& l : links()) known += (known.empty() ? "" : ", ") + l.name;
  throw InputError(fmt::format("--parallel link '{}': unknown link (known: {})", name, known));
}

std::string default_intra_link(const std::string& device_name) {
  std::string n = device_name;
  std::transform(n.begin(), n.end(), n.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const bool pcie = n.find("pcie") != std::string::npos || n.find("nvl") != std::string::npos;
  if (!pcie && n.find("a100") != std::string::npos) return "nvlink3";
  if (!pcie && (n.find("h100") != std::string::npos || n.find("h200") != std::string::npos))
    return "nvlink4";
  if (n.find("b200") != std::string::npos) return "nvlink5";
  if (n.find("h100") != std::string::npos) return "pcie5";
  return "pcie4";
}

}  // namespace dvfsim
