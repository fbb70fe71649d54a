#pragma once
#include "gpubench/results/result.hpp"

#include <string>
#include <vector>

namespace gpubench {

std::string version_string();
std::string git_revision();
/// SHA-256 (64 hex digits) of every source file the binary was built from, computed at build time
/// (scripts/source-hash.cmake): the same for a copy of the tree without git, changed by any edit.
std::string source_hash();
/// Fills version, git, argv, start time (UTC now), host, CUDA driver and runtime versions.
run_meta collect_meta(const std::vector<std::string>& argv);
host_info collect_host_info();
std::string utc_timestamp_now();

} // namespace gpubench
