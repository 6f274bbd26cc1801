// Loading a plugin runs its code (static initialisers, its registration function) inside
// rooftune: one that crashes or hangs there would take the whole command down. Each plugin is
// first loaded in a child process, under a deadline; only one that loaded there is loaded here.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace rooftune::cli {

// Loads `paths` into the global registry, in order. A plugin that crashes or does not finish
// loading within the deadline (ROOFTUNE_PLUGIN_LOAD_DEADLINE_SECONDS, else 30 s) is a
// FailedPrecondition naming it, and nothing of it is loaded here.
absl::Status LoadPluginsGuarded(const std::vector<std::string>& paths);

}  // namespace rooftune::cli
