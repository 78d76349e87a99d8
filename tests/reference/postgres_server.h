// PostgresServer: a PostgreSQL server of the test's own, as the Redis tests
// start redis-server: scripts/postgres-service.sh (the same script target
// files start as a service, so there is one way to start a server) on a fresh
// temporary folder: a new cluster (a copy of the script's cached initdb
// template), `postgres` on a free 127.0.0.1 port with its Unix socket in that
// folder (fsync off: the data dies with the test), trust authentication for
// the superuser `postgres`. The constructor returns once the server accepts
// connections (or throws, with the server's log, at the deadline); the
// destructor always stops the server (SIGQUIT to its process group, then
// SIGKILL after a deadline), reaps it and removes the folder. Nothing here
// uses a server the machine happens to run.
//
// The script takes the binaries from the newest /usr/lib/postgresql/*/bin
// (Debian's `postgresql` package), not from PATH, and as root runs initdb and
// the server as `nobody` (so $TMPDIR, default /tmp, must be reachable by
// nobody).
//
// Not thread-safe: one owner thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>

#include "temp_dir.h"

namespace idemproof::ref::testing {

class PostgresServer {
 public:
  explicit PostgresServer(std::chrono::milliseconds deadline = std::chrono::seconds(60));
  ~PostgresServer();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  int port() const { return port_; }
  // postgresql://postgres@127.0.0.1:PORT/DATABASE
  std::string url(const std::string& database = "postgres") const;
  // Runs `sql` as the superuser on database `postgres`; throws
  // std::runtime_error with the server's message.
  void execute(const std::string& sql) const;
  // Runs `sql` like execute and returns the first column of its first row
  // ("" when there is none or it is NULL).
  std::string query_value(const std::string& sql) const;
  // A new empty schema, and the URL whose connections create and find their
  // tables in it (search_path): a fresh store without a new database.
  std::string fresh_schema_url();
  // The schema of the latest fresh_schema_url ("" before the first), to
  // name its tables in execute / query_value.
  std::string last_schema() const { return schemas_ == 0 ? "" : "run_" + std::to_string(schemas_); }

 private:
  void stop();  // SIGQUIT, SIGKILL after a deadline, reap; idempotent

  TempDir dir_;  // first member: removed after the server has stopped
  int port_ = 0;
  pid_t pid_ = -1;
  int schemas_ = 0;
};

}  // namespace idemproof::ref::testing
