#pragma once
// A sweep's results.csv (docs/experiments.md): one row per run. Columns: the
// run's identity, the engine settings (apps/settings.h), the parameters the
// experiment's policies declare (policies/registry.h), then every scalar of
// the runs' summary.json in the order summary.json writes them (the baseline
// object flattened to baseline_<key>), then run_dir and error.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "apps/experiment.h"

namespace dvfsim {

// One row: values by column name, plus the order in which the names came.
class ResultsRow {
 public:
  void set(const std::string& column, std::string value);
  // "" when the row has no such column.
  const std::string& get(const std::string& column) const;
  const std::vector<std::string>& columns() const { return order_; }
  bool empty() const { return order_.empty(); }

 private:
  std::map<std::string, std::string> values_;
  std::vector<std::string> order_;
};

// A run's row from its summary.json text (simdjson): top-level scalars by
// name, policy_params by each parameter's own name, the baseline object as
// baseline_<key>; arrays are left out. InputError when it is not a summary.
ResultsRow summary_row(std::string_view summary_json);
// The row of a run that failed: what it was asked to do, and why it failed.
ResultsRow failed_row(const SweepPoint& p, const std::string& error);

// The row of a run that --merge found neither complete nor failed.
ResultsRow missing_row(const SweepPoint& p);

// The whole table; rows[i] belongs to points[i] (an empty row: not run).
std::string results_csv(const Experiment& e, const std::vector<SweepPoint>& points,
                        const std::vector<ResultsRow>& rows);

}  // namespace dvfsim
