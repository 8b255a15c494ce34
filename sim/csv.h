#pragma once
// Reading the CSV files dvfsim takes as input (calibration measurements, NVML
// samples, Nsight Compute sidecars): one line into fields, one field into a
// number. Error messages stay with the callers, which know file, line and column.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dvfsim {

// Splits one CSV line into fields (RFC 4180 quoting: a quoted field may hold
// commas and doubled quotes). Carriage returns outside quotes are dropped.
std::vector<std::string> split_csv_line(std::string_view line);

// The whole field as a finite number (std::stod syntax), else std::nullopt.
std::optional<double> parse_csv_double(const std::string& field);

}  // namespace dvfsim
