#include "framework/reader.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace rooftune {

std::string Reader::Name() const {
  return absl::StrFormat("streams:%d%s%s%s", streams, sums_in_memory ? "/sums_in_memory" : "",
                         dot ? "/dot" : "",
                         !prefetch          ? ""
                         : prefetch_into_l2 ? "/prefetch_l2"
                                            : "/prefetch");
}

std::optional<Reader> Reader::Parse(absl::string_view name) {
  Reader reader;
  bool first = true;
  for (absl::string_view part : absl::StrSplit(name, '/')) {
    if (first) {
      first = false;
      if (!absl::ConsumePrefix(&part, "streams:") || !absl::SimpleAtoi(part, &reader.streams) ||
          reader.streams < 1) {
        return std::nullopt;
      }
    } else if (part == "sums_in_memory" && !reader.sums_in_memory && !reader.dot &&
               !reader.prefetch) {
      reader.sums_in_memory = true;
    } else if (part == "dot" && !reader.sums_in_memory && !reader.dot && !reader.prefetch) {
      reader.dot = true;
    } else if ((part == "prefetch" || part == "prefetch_l2") && !reader.prefetch) {
      reader.prefetch = true;
      reader.prefetch_into_l2 = part == "prefetch_l2";
    } else {
      return std::nullopt;
    }
  }
  return reader;
}

}  // namespace rooftune
