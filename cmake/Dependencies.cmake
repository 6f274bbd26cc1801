# Every dependency comes from a Debian 12 package; scripts/setup.sh installs the missing ones.
find_package(Threads REQUIRED)
find_package(hwy REQUIRED)
find_package(TBB REQUIRED)
find_package(benchmark REQUIRED)
find_package(absl REQUIRED)
find_package(nlohmann_json REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(GTest REQUIRED)
# The sanitizer builds (ROOFTUNE_FUZZ, ROOFTUNE_TSAN) take no baselines and no counters.
if(ROOFTUNE_FUZZ OR ROOFTUNE_TSAN)
  return()
endif()

find_package(OpenMP REQUIRED)  # oneDNN's CPU runtime on Debian; its team size is set per call
# dnnl-config.cmake looks for OpenCL headers and ICD loader even for the CPU-only build.
find_package(dnnl REQUIRED)

# libpfm4 ships neither a CMake config nor a pkg-config file.
find_library(PFM_LIBRARY pfm REQUIRED)
find_path(PFM_INCLUDE_DIR perfmon/pfmlib_perf_event.h REQUIRED)
add_library(pfm::pfm UNKNOWN IMPORTED)
set_target_properties(pfm::pfm PROPERTIES
  IMPORTED_LOCATION "${PFM_LIBRARY}"
  INTERFACE_INCLUDE_DIRECTORIES "${PFM_INCLUDE_DIR}")
