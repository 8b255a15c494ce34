#pragma once
// Declared parameters, shared by the policy registry (policies/registry.h) and
// the model registry (sim/model_registry.h): each implementation declares its
// keys with a description; resolved values are kept as written and read
// through typed getters that name the owner and the key in their errors.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace dvfsim {

struct ParamSpec {
  enum class Kind { required, defaulted, optional };
  std::string name;
  Kind kind = Kind::defaulted;
  std::string default_value;  // for Kind::defaulted
  std::string description;    // with units
};

// Resolved parameter values; typed getters throw InputError naming the key.
class Params {
 public:
  Params() = default;
  Params(std::string owner, std::map<std::string, std::string> values)
      : owner_(std::move(owner)), values_(std::move(values)) {}
  bool has(const std::string& key) const { return values_.count(key) > 0; }
  std::string str(const std::string& key) const;
  double number(const std::string& key) const;
  // number(key) when set, else `fallback` (for optional keys).
  double number_or(const std::string& key, double fallback) const;
  std::int32_t integer(const std::string& key) const;
  const std::map<std::string, std::string>& all() const { return values_; }
  const std::string& owner() const { return owner_; }

 private:
  std::string owner_;
  std::map<std::string, std::string> values_;
};

// The declared names, comma-separated ("none" when there are none).
std::string param_names(const std::vector<ParamSpec>& specs);

}  // namespace dvfsim
