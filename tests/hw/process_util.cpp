#include "process_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace dvfsim::hw::testing {
namespace {

std::vector<std::string> log_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

}  // namespace

HwSandbox::HwSandbox() {
  std::string pattern = (std::filesystem::temp_directory_path() / "dvfsim-hw-test-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = pattern;
  write("fake.conf", "");
  env["DVFSIM_NVML_LIBRARY"] = DVFSIM_FAKE_NVML;
  env["FAKE_NVML_CONFIG"] = path("fake.conf");
  env["FAKE_NVML_LOG"] = log_path();
  env["DVFSIM_HW_MARKER"] = marker_path();
}

HwSandbox::~HwSandbox() {
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

void HwSandbox::configure(const std::string& lines) {
  std::ofstream out(path("fake.conf"), std::ios::app);
  out << lines << "\n";
}

void HwSandbox::write(const std::string& name, const std::string& content) const {
  std::ofstream out(path(name));
  out << content;
}

std::string HwSandbox::read(const std::string& name) const {
  std::ifstream in(path(name));
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

bool HwSandbox::exists(const std::string& name) const {
  return std::filesystem::exists(path(name));
}

pid_t HwSandbox::start(const std::vector<std::string>& args) {
  ++runs_;
  std::string out_path = path("stdout." + std::to_string(runs_));
  std::string err_path = path("stderr." + std::to_string(runs_));
  std::vector<std::string> argv_storage = {DVFSIM_HW_TESTDRIVER, "hw"};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::map<std::string, std::string> environment;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string text = *entry;
    size_t equals = text.find('=');
    if (equals != std::string::npos) environment[text.substr(0, equals)] = text.substr(equals + 1);
  }
  for (const auto& [key, value] : env) environment[key] = value;
  std::vector<std::string> env_storage;
  for (const auto& [key, value] : environment) env_storage.push_back(key + "=" + value);
  std::vector<char*> argv;
  for (auto& arg : argv_storage) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (auto& entry : env_storage) envp.push_back(entry.data());
  envp.push_back(nullptr);

  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    int out_fd = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err_fd = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int null_fd = open("/dev/null", O_RDONLY);
    dup2(null_fd, 0);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    execve(argv[0], argv.data(), envp.data());
    _exit(126);
  }
  run_of_pid_[pid] = runs_;
  return pid;
}

ProcessResult HwSandbox::wait(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ProcessResult result;
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.exit_code = 128 + WTERMSIG(status);
  int run = run_of_pid_[pid];
  result.out = read("stdout." + std::to_string(run));
  result.err = read("stderr." + std::to_string(run));
  return result;
}

std::vector<std::string> HwSandbox::clock_calls() const {
  std::vector<std::string> calls;
  for (const auto& line : log_lines(log_path())) {
    // "<ns> pid=<pid> <call> ..." -> "<call> ..."
    size_t first = line.find(' ');
    size_t second = line.find(' ', first + 1);
    calls.push_back(line.substr(second + 1));
  }
  return calls;
}

std::vector<long long> HwSandbox::clock_call_times_ns() const {
  std::vector<long long> times;
  for (const auto& line : log_lines(log_path())) times.push_back(std::stoll(line));
  return times;
}

bool HwSandbox::wait_for_calls(size_t count, double timeout_s) const {
  auto give_up = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < give_up) {
    if (log_lines(log_path()).size() >= count) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

}  // namespace dvfsim::hw::testing
