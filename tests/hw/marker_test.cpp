#include "hw/marker.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

namespace dvfsim::hw {
namespace {

TEST(HwMarker, FormatParsesBack) {
  Marker marker = marker_for_this_process({0, 3});
  auto parsed = parse_marker(format_marker(marker));
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->pid, marker.pid);
  EXPECT_EQ(parsed->pid_start_ticks, marker.pid_start_ticks);
  EXPECT_EQ(parsed->gpus, (std::vector<unsigned>{0, 3}));
  EXPECT_EQ(parsed->started_utc, marker.started_utc);
}

TEST(HwMarker, MalformedMarkersAreRejected) {
  EXPECT_FALSE(parse_marker("").has_value());
  EXPECT_FALSE(parse_marker("pid=abc\ngpus=0\n").has_value());
  EXPECT_FALSE(parse_marker("pid=12\ngpus=0,x\n").has_value());
  EXPECT_FALSE(parse_marker("gpus=0\n").has_value());
}

TEST(HwMarker, ThisProcessIsAlive) {
  EXPECT_TRUE(marker_owner_alive(marker_for_this_process({0})));
}

TEST(HwMarker, AReusedPidIsNotTheOwner) {
  Marker marker = marker_for_this_process({0});
  ASSERT_NE(marker.pid_start_ticks, 0u);
  marker.pid_start_ticks += 12345;  // same pid, different process start
  EXPECT_FALSE(marker_owner_alive(marker));
}

TEST(HwMarker, AnExitedProcessIsNotAlive) {
  pid_t child = fork();
  if (child == 0) _exit(0);
  int status = 0;
  waitpid(child, &status, 0);
  Marker marker;
  marker.pid = child;
  EXPECT_FALSE(marker_owner_alive(marker));
}

}  // namespace
}  // namespace dvfsim::hw
