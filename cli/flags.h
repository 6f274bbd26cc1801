// rooftune's command-line flags, defined once (flags.cc). Each command reads the ones it takes;
// the command table (commands.cc) lists which, refuses the rest and prints their help.
#pragma once

#include <string>
#include <vector>

#include "absl/flags/declare.h"

ABSL_DECLARE_FLAG(std::string, kernel);
ABSL_DECLARE_FLAG(std::string, shape);
ABSL_DECLARE_FLAG(std::string, dtype);
ABSL_DECLARE_FLAG(std::string, epilogue);
ABSL_DECLARE_FLAG(std::string, config);
ABSL_DECLARE_FLAG(std::string, threads);
ABSL_DECLARE_FLAG(bool, cold);
ABSL_DECLARE_FLAG(bool, warm);
ABSL_DECLARE_FLAG(bool, json);
ABSL_DECLARE_FLAG(bool, counters);
ABSL_DECLARE_FLAG(std::string, strategy);
ABSL_DECLARE_FLAG(double, budget_seconds);
ABSL_DECLARE_FLAG(bool, in_process);
ABSL_DECLARE_FLAG(bool, retry_failed);
ABSL_DECLARE_FLAG(bool, quick);
ABSL_DECLARE_FLAG(bool, force);
ABSL_DECLARE_FLAG(bool, fresh);
ABSL_DECLARE_FLAG(std::string, format);
ABSL_DECLARE_FLAG(std::string, out);
ABSL_DECLARE_FLAG(std::string, mlp);
ABSL_DECLARE_FLAG(std::string, batch);
ABSL_DECLARE_FLAG(std::string, sweep);
ABSL_DECLARE_FLAG(bool, measure);
ABSL_DECLARE_FLAG(int, repeat);
ABSL_DECLARE_FLAG(std::string, machine);
ABSL_DECLARE_FLAG(std::string, prefer);
ABSL_DECLARE_FLAG(std::string, db);
ABSL_DECLARE_FLAG(std::vector<std::string>, plugin);
