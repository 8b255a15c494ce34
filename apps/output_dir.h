#pragma once
// Output directories that hold one run only (issue 14): a lock per sweep
// directory, and the steps that keep `run --out DIR` from mixing two runs.
#include <string>
#include <string_view>

namespace dvfsim {

// An exclusive lock on DIR/.dvfsim.lock (flock: released when the process
// ends, even by SIGKILL, so it never goes stale). The file names the holder:
// pid, start time and command line. While another process holds it, the
// constructor throws InputError (exit 2) naming the holder.
class DirectoryLock {
 public:
  DirectoryLock(const std::string& dir, const std::string& command);
  ~DirectoryLock();
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

 private:
  int fd_ = -1;
};

// Removes temporaries that write_file_atomic left in `dir` ("NAME.tmp.PID")
// when PID no longer runs (a killed writer); returns how many were removed.
int remove_stale_temporaries(const std::string& dir);

// Before `run` writes into `dir`: creates it, removes stale temporaries, and
// removes an old summary.json, which is written last and so marks a complete
// run: a run killed while replacing an earlier one leaves no summary.json.
void prepare_run_directory(const std::string& dir);

}  // namespace dvfsim
