// A prepared SQLite statement that finalizes itself, bound and read by position: the tuning
// database's one way to run SQL with values.
#pragma once

#include <sqlite3.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace rooftune {

class SqliteStatement {
 public:
  SqliteStatement(sqlite3* db, const char* sql) : db_(db) {
    status_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr);
  }
  ~SqliteStatement() { sqlite3_finalize(stmt_); }
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;
  absl::Status status() const {
    if (status_ == SQLITE_OK) return absl::OkStatus();
    return absl::DataLossError(absl::StrCat("tuning database: ", sqlite3_errmsg(db_)));
  }
  SqliteStatement& Bind(int i, const std::string& text) {
    sqlite3_bind_text(stmt_, i, text.c_str(), int(text.size()), SQLITE_TRANSIENT);
    return *this;
  }
  SqliteStatement& Bind(int i, double value) {
    sqlite3_bind_double(stmt_, i, value);
    return *this;
  }
  SqliteStatement& Bind(int i, int value) {
    sqlite3_bind_int(stmt_, i, value);
    return *this;
  }
  int Step() { return sqlite3_step(stmt_); }
  // Every byte stored, a NUL among them (a text is bound with its length).
  std::string Text(int i) {
    const unsigned char* text = sqlite3_column_text(stmt_, i);
    if (text == nullptr) return "";
    return std::string(reinterpret_cast<const char*>(text), size_t(sqlite3_column_bytes(stmt_, i)));
  }
  double Double(int i) { return sqlite3_column_double(stmt_, i); }
  int Int(int i) { return sqlite3_column_int(stmt_, i); }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  int status_;
};

}  // namespace rooftune
