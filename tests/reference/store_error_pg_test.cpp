// store-error (injectors/tcp_faults/store_error.h) between libpq and a real
// PostgreSQL server of the test's own (postgres_server.h), through the tcp
// fault proxy: the client gets the store's own ErrorResponse (its SQLSTATE),
// the connection stays usable, and the transaction state it is told is the
// server's: an autocommit write is not applied, an error inside BEGIN leaves
// the transaction failed (its COMMIT rolls back), a failed COMMIT rolled
// everything back. Simple query (PQexec) and extended query (PQexecParams).
#include <catch2/catch.hpp>

#include <libpq-fe.h>

#include <memory>
#include <string>

#include "injectors/fault_event.h"
#include "injectors/tcp_fault.h"
#include "injectors/tcp_fault_proxy.h"
#include "injectors/tcp_faults/store_error.h"
#include "postgres_server.h"

using namespace idemproof::injectors;
using namespace idemproof::ref::testing;

namespace {

using Conn = std::unique_ptr<PGconn, decltype(&PQfinish)>;

struct Outcome {
  ExecStatusType status;
  std::string sqlstate, tag;
};

// One statement, simple (PQexec) or extended (PQexecParams, no parameters).
Outcome Run(PGconn* c, const std::string& sql, bool extended) {
  PGresult* r = extended ? PQexecParams(c, sql.c_str(), 0, nullptr, nullptr, nullptr, nullptr, 0)
                         : PQexec(c, sql.c_str());
  Outcome o{PQresultStatus(r), "", PQcmdStatus(r)};
  if (const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE)) o.sqlstate = state;
  PQclear(r);
  return o;
}

std::shared_ptr<TcpFaultRule> Rule(const std::string& statement, std::int64_t skip) {
  StoreErrorOptions o;
  o.statement = statement;
  o.skip = skip;
  FaultSettings settings;
  settings.name = "store-error";
  return std::make_shared<TcpFaultRule>(std::make_shared<StoreError>(o), settings);
}

}  // namespace

TEST_CASE("store-error through libpq: the server's own error, its transaction state, a usable connection",
          "[postgres][store-error][slow]") {
  const bool extended = GENERATE(false, true);
  INFO((extended ? "extended query (PQexecParams)" : "simple query (PQexec)"));
  PostgresServer pg;
  pg.execute("CREATE TABLE t (id INTEGER)");
  FaultEventLog events;
  TcpProxySettings settings;
  settings.upstream = Endpoint{"127.0.0.1", static_cast<std::uint16_t>(pg.port())};
  TcpFaultProxy proxy(settings, &events);
  REQUIRE(proxy.start().ok());
  const std::string conninfo = "host=127.0.0.1 port=" + std::to_string(proxy.endpoint().port) +
                               " user=postgres dbname=postgres connect_timeout=5";
  Conn conn(PQconnectdb(conninfo.c_str()), PQfinish);  // opened before arming, as a pool's
  REQUIRE(PQstatus(conn.get()) == CONNECTION_OK);
  PGconn* c = conn.get();
  const auto count = [&] { return pg.query_value("SELECT count(*) FROM t"); };

  SECTION("an autocommit write is answered with the error and not applied") {
    auto rule = Rule(R"(^\s*INSERT)", 0);
    proxy.arm(rule);
    const Outcome o = Run(c, "INSERT INTO t VALUES (1)", extended);
    CHECK(o.status == PGRES_FATAL_ERROR);
    CHECK(o.sqlstate == "40001");
    CHECK(std::string(PQerrorMessage(c)).find("could not serialize access") != std::string::npos);
    CHECK(PQtransactionStatus(c) == PQTRANS_IDLE);
    CHECK(count() == "0");
    CHECK(Run(c, "INSERT INTO t VALUES (2)", extended).status == PGRES_COMMAND_OK);  // times: 1
    CHECK(count() == "1");
    CHECK(rule->injected.load() == 1);
  }
  SECTION("an error inside BEGIN leaves the transaction failed, and its COMMIT rolls back") {
    auto rule = Rule(R"(^\s*(INSERT|UPDATE))", 1);  // the UPDATE, the second write
    proxy.arm(rule);
    CHECK(Run(c, "BEGIN", extended).status == PGRES_COMMAND_OK);
    CHECK(Run(c, "INSERT INTO t VALUES (1)", extended).status == PGRES_COMMAND_OK);
    const Outcome o = Run(c, "UPDATE t SET id = 2", extended);
    CHECK(o.status == PGRES_FATAL_ERROR);
    CHECK(o.sqlstate == "40001");
    CHECK(PQtransactionStatus(c) == PQTRANS_INERROR);
    const Outcome commit = Run(c, "COMMIT", extended);
    CHECK(commit.status == PGRES_COMMAND_OK);
    CHECK(commit.tag == "ROLLBACK");  // the server's own answer to a failed transaction's COMMIT
    CHECK(PQtransactionStatus(c) == PQTRANS_IDLE);
    CHECK(count() == "0");
  }
  SECTION("a failed COMMIT rolls the transaction back and ends it") {
    auto rule = Rule(R"(^\s*COMMIT)", 0);
    proxy.arm(rule);
    CHECK(Run(c, "BEGIN", extended).status == PGRES_COMMAND_OK);
    CHECK(Run(c, "INSERT INTO t VALUES (1)", extended).status == PGRES_COMMAND_OK);
    const Outcome o = Run(c, "COMMIT", extended);
    CHECK(o.status == PGRES_FATAL_ERROR);
    CHECK(o.sqlstate == "40001");
    CHECK(PQtransactionStatus(c) == PQTRANS_IDLE);
    CHECK(count() == "0");
    // The connection goes on: nothing of the substitute is left in its answers.
    CHECK(Run(c, "SELECT 1", extended).status == PGRES_TUPLES_OK);
    CHECK(Run(c, "INSERT INTO t VALUES (3)", extended).status == PGRES_COMMAND_OK);
    CHECK(count() == "1");
  }
  proxy.heal();
}
