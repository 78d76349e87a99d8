// store-error (injectors/tcp_faults/store_error.h): the PostgreSQL framing
// it reads (a message split over reads, several in one read, the startup
// and SSLRequest, extended query with named statements, bytes that are not
// PostgreSQL), what it sends in a write's place and which answers it drops;
// then the fault through a real proxy (an echo server shows the bytes the
// store would get) and its options' errors.
#include <catch2/catch.hpp>

#include <regex>
#include <string>
#include <vector>

#include "injectors/tcp_faults/store_error.h"
#include "support/tcp_rig.h"

using namespace idemproof::injectors;
using namespace idemproof::tcp_rig;
using namespace std::chrono_literals;

namespace {

std::string Be32(std::uint32_t v) {
  std::string s;
  for (int shift = 24; shift >= 0; shift -= 8) s.push_back(static_cast<char>((v >> shift) & 0xff));
  return s;
}
std::string Msg(char type, const std::string& body) { return std::string(1, type) + Be32(body.size() + 4) + body; }
std::string Z(const std::string& s) { return s + '\0'; }
std::string Query(const std::string& sql) { return Msg('Q', Z(sql)); }
std::string Parse(const std::string& name, const std::string& sql) { return Msg('P', Z(name) + Z(sql) + std::string(2, '\0')); }
std::string Bind(const std::string& portal, const std::string& statement) {
  return Msg('B', Z(portal) + Z(statement) + std::string(6, '\0'));
}
std::string Execute(const std::string& portal) { return Msg('E', Z(portal) + std::string(4, '\0')); }
std::string Describe(const std::string& portal) { return Msg('D', "P" + Z(portal)); }
std::string Sync() { return Msg('S', ""); }
std::string Startup() {
  const std::string params = Z("user") + Z("postgres") + std::string(1, '\0');
  return Be32(8 + params.size()) + Be32(196608) + params;
}
std::string SslRequest() { return Be32(8) + Be32(80877103); }
std::string Ready(char state) { return Msg('Z', std::string(1, state)); }
std::string Complete(const std::string& tag) { return Msg('C', Z(tag)); }
std::string ErrorMsg() { return Msg('E', "C40001" + std::string(1, '\0') + std::string(1, '\0')); }

const std::string kWrite = R"(^\s*(INSERT|UPDATE|DELETE|MERGE|COMMIT|END)\b)";

// Decides as the fault does: matching statements counted, the one after
// `skip` answered.
struct Decider {
  explicit Decider(std::int64_t skip) : skip(skip) {}
  std::int64_t skip;
  std::int64_t seen = 0;
  std::vector<std::string> asked;
  PgErrorStream::Decide fn() {
    return [this](std::string_view sql) {
      asked.emplace_back(sql);
      if (!std::regex_search(sql.begin(), sql.end(), std::regex(kWrite, std::regex::icase))) return false;  // short SQL only
      return ++seen == skip + 1 || skip < 0;
    };
  }
};

PgErrorStream Stream() { return PgErrorStream("40001", "could not serialize"); }

// The substitute of an extended-query statement: Parse/Bind/Execute of `sql`.
std::string RunUnnamed(const std::string& sql) { return Parse("", sql) + Bind("", "") + Execute(""); }

}  // namespace

TEST_CASE("store-error: a query split over reads is held until whole, then answered in the store", "[injectors][tcp][store-error]") {
  PgErrorStream s = Stream();
  Decider d(0);
  std::vector<PgErrorStream::Answered> answered;
  const std::string q = Query("INSERT INTO t VALUES (1)");
  std::string out;
  for (char ch : q) out += s.upstream(std::string(1, ch), d.fn(), answered);  // one byte per read
  CHECK(out == Query(s.raise_sql()));
  REQUIRE(answered.size() == 1);
  CHECK(answered[0].sql == "INSERT INTO t VALUES (1)");
  CHECK_FALSE(answered[0].commit);
  CHECK(d.asked.size() == 1);  // asked once, when whole
  CHECK(s.raise_sql().find("ERRCODE = '40001'") != std::string::npos);
  // The store's own answer (ErrorResponse, ReadyForQuery) goes back as it is.
  CHECK(s.downstream(ErrorMsg() + Ready('I')) == ErrorMsg() + Ready('I'));
}

TEST_CASE("store-error: several messages in one read, the Nth write answered, the rest forwarded", "[injectors][tcp][store-error]") {
  PgErrorStream s = Stream();
  Decider d(1);  // skip one write
  std::vector<PgErrorStream::Answered> answered;
  const std::string read = Query("SELECT 1") + Query("insert into t values (1)") + Query("  UPDATE t SET a = 2") +
                           Query("DELETE FROM t");
  const std::string out = s.upstream(read, d.fn(), answered);
  CHECK(out == Query("SELECT 1") + Query("insert into t values (1)") + Query(s.raise_sql()) + Query("DELETE FROM t"));
  REQUIRE(answered.size() == 1);
  CHECK(answered[0].sql == "  UPDATE t SET a = 2");
  CHECK(d.asked.size() == 4);
}

TEST_CASE("store-error: a COMMIT becomes ROLLBACK then the error, the ROLLBACK's answer dropped", "[injectors][tcp][store-error]") {
  PgErrorStream s = Stream();
  Decider d(0);
  std::vector<PgErrorStream::Answered> answered;
  CHECK(s.upstream(Query("BEGIN"), d.fn(), answered) == Query("BEGIN"));
  CHECK(s.downstream(Complete("BEGIN") + Ready('T')) == Complete("BEGIN") + Ready('T'));
  CHECK(s.upstream(Query("COMMIT"), d.fn(), answered) == Query("ROLLBACK") + Query(s.raise_sql()));
  REQUIRE(answered.size() == 1);
  CHECK(answered[0].commit);
  // ROLLBACK's CommandComplete and ReadyForQuery go; the error and its
  // ReadyForQuery ('I': the transaction is gone) reach the service, split or not.
  const std::string answers = Complete("ROLLBACK") + Ready('I') + ErrorMsg() + Ready('I');
  std::string got;
  for (std::size_t i = 0; i < answers.size(); i += 3) got += s.downstream(answers.substr(i, 3));
  CHECK(got == ErrorMsg() + Ready('I'));
  // Afterwards the answers pass.
  CHECK(s.downstream(Complete("SELECT 1") + Ready('I')) == Complete("SELECT 1") + Ready('I'));
}

TEST_CASE("store-error: extended query, the statement replaced from its Bind, ParseComplete and BindComplete dropped", "[injectors][tcp][store-error]") {
  PgErrorStream s = Stream();
  Decider d(-1);  // every write
  std::vector<PgErrorStream::Answered> answered;
  const std::string sql = "UPDATE records SET state = $1";
  const std::string batch = Parse("", sql) + Bind("", "") + Describe("") + Execute("") + Sync();
  // Split in the middle of the Bind: nothing goes until the Sync.
  std::string out = s.upstream(batch.substr(0, 30), d.fn(), answered);
  CHECK(out.empty());
  out += s.upstream(batch.substr(30), d.fn(), answered);
  CHECK(out == RunUnnamed(s.raise_sql()) + Sync());  // its unnamed Parse goes too
  REQUIRE(answered.size() == 1);
  CHECK(answered[0].sql == sql);
  // The substitute's ParseComplete and BindComplete are dropped; the error
  // and ReadyForQuery ('E': inside BEGIN) pass.
  const std::string parse_complete = Msg('1', ""), bind_complete = Msg('2', "");
  CHECK(s.downstream(parse_complete + bind_complete + ErrorMsg() + Ready('E')) == ErrorMsg() + Ready('E'));
  // A statement before it in the same unit is forwarded and answered first.
  const std::string before = Parse("", "SELECT 1") + Bind("", "") + Execute("");
  CHECK(s.upstream(before + batch, d.fn(), answered) == before + RunUnnamed(s.raise_sql()) + Sync());
  const std::string first = parse_complete + bind_complete + Msg('D', "row") + Complete("SELECT 1");
  CHECK(s.downstream(first + parse_complete + bind_complete + ErrorMsg() + Ready('I')) ==
        first + ErrorMsg() + Ready('I'));
}

TEST_CASE("store-error: a named statement prepared once is matched when executed later", "[injectors][tcp][store-error]") {
  PgErrorStream s = Stream();
  Decider d(1);  // its second execution
  std::vector<PgErrorStream::Answered> answered;
  const std::string prepare = Parse("s1", "INSERT INTO t VALUES ($1)") + Sync();
  CHECK(s.upstream(prepare, d.fn(), answered) == prepare);
  const std::string run = Bind("", "s1") + Execute("") + Sync();
  CHECK(s.upstream(run, d.fn(), answered) == run);
  CHECK(s.upstream(run, d.fn(), answered) == RunUnnamed(s.raise_sql()) + Sync());
  CHECK(answered.size() == 1);
  // A named statement parsed in the same unit is kept (the client may run it
  // again); its ParseComplete reaches the client before the error.
  PgErrorStream n = Stream();
  Decider dn(0);
  const std::string named = Parse("s2", "INSERT INTO t VALUES ($1)");
  CHECK(n.upstream(named + Bind("", "s2") + Execute("") + Sync(), dn.fn(), answered) ==
        named + RunUnnamed(n.raise_sql()) + Sync());
  const std::string p = Msg('1', ""), b = Msg('2', "");
  CHECK(n.downstream(p + p + b + ErrorMsg() + Ready('I')) == p + ErrorMsg() + Ready('I'));
  // A COMMIT through the extended protocol: ROLLBACK first, its three answers dropped too.
  PgErrorStream c = Stream();
  Decider dc(0);
  CHECK(c.upstream(Parse("", "COMMIT") + Bind("", "") + Execute("") + Sync(), dc.fn(), answered) ==
        RunUnnamed("ROLLBACK") + RunUnnamed(c.raise_sql()) + Sync());
  CHECK(c.downstream(p + b + Complete("ROLLBACK") + p + b + ErrorMsg() + Ready('I')) == ErrorMsg() + Ready('I'));
  CHECK(answered.size() == 3);
}

TEST_CASE("store-error: startup and SSLRequest pass, TLS and foreign bytes are left alone", "[injectors][tcp][store-error]") {
  std::vector<PgErrorStream::Answered> answered;
  {
    PgErrorStream s = Stream();
    Decider d(0);
    CHECK(s.upstream(SslRequest(), d.fn(), answered) == SslRequest());
    CHECK(s.downstream("N") == "N");  // no TLS: the client goes on in the clear
    CHECK(s.upstream(Startup(), d.fn(), answered) == Startup());
    CHECK(s.downstream(Msg('R', Be32(0)) + Ready('I')) == Msg('R', Be32(0)) + Ready('I'));
    CHECK(s.upstream(Query("INSERT INTO t VALUES (1)"), d.fn(), answered) == Query(s.raise_sql()));
    CHECK_FALSE(s.opaque());
  }
  {
    PgErrorStream s = Stream();
    Decider d(0);
    CHECK(s.upstream(SslRequest(), d.fn(), answered) == SslRequest());
    CHECK(s.downstream("S") == "S");  // TLS from here: nothing is read
    CHECK(s.opaque());
    const std::string looks_like = Query("INSERT INTO t VALUES (1)");
    CHECK(s.upstream(looks_like, d.fn(), answered) == looks_like);
    CHECK(d.asked.empty());
  }
  {
    PgErrorStream s = Stream();
    Decider d(0);
    const std::string resp = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n";
    CHECK(s.upstream(resp, d.fn(), answered) == resp);  // '*' is no message type
    CHECK(s.opaque());
  }
  CHECK(answered.size() == 1);
}

TEST_CASE("store-error through a real proxy: the store gets the raising statement instead of the write", "[injectors][tcp][store-error]") {
  Rig rig;  // an echo server: what the store got comes back
  Client c(rig.port());
  REQUIRE(c.connected());
  auto fault = Build("store-error: {statement: '^INSERT', sqlstate: 40P01, message: \"deadlock detected\"}");
  REQUIRE(fault->start(rig.context()).ok());
  const std::string select = Query("SELECT 1");
  REQUIRE(c.Echoes(select));
  const std::string insert = Query("INSERT INTO t VALUES (1)");
  REQUIRE(c.Send(insert.substr(0, 7)));
  std::this_thread::sleep_for(50ms);  // a separate read: held until whole
  REQUIRE(c.Send(insert.substr(7)));
  const std::string expected = Query(PgErrorStream("40P01", "deadlock detected").raise_sql());
  CHECK(c.Recv(expected.size(), 2000ms).bytes == expected);
  CHECK(AwaitEvent(rig.events, "injected") ==
        "answered matching write 1 on connection 1 with ErrorResponse 40P01 instead of forwarding it: "
        "INSERT INTO t VALUES (1)");
  CHECK(c.Echoes(insert));  // times: 1, so the next one goes through
  CHECK(fault->counters().counts.injected == 1);
}

std::string Resp(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const auto& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return out;
}

TEST_CASE("store-error on Redis: a command split over reads, several in one read, the Nth write as an EVAL of the error", "[injectors][tcp][store-error]") {
  RespErrorStream s("OOM command not allowed");
  std::int64_t seen = 0;
  std::vector<std::string> asked;
  const PgErrorStream::Decide decide = [&](std::string_view command) {
    asked.emplace_back(command);
    return command.starts_with("SET ") && ++seen == 2;
  };
  std::vector<PgErrorStream::Answered> answered;
  const std::string first = Resp({"GET", "k"}) + Resp({"SET", "k", "v1"});
  CHECK(s.upstream(first, decide, answered) == first);  // several in one read; the first SET passes
  const std::string set = Resp({"SET", "k", "v\r\n2"});  // a value holding CRLF: bulk strings are counted
  std::string out;
  for (char ch : set) out += s.upstream(std::string(1, ch), decide, answered);  // one byte per read
  CHECK(out == s.eval_command());
  CHECK(s.eval_command() ==
        "*3\r\n$4\r\nEVAL\r\n$57\r\nreturn redis.error_reply([==[OOM command not allowed]==])\r\n$1\r\n0\r\n");
  REQUIRE(answered.size() == 1);
  CHECK(answered[0].sql == "SET k v\r\n2");
  CHECK(asked.size() == 3);  // each command asked once, when whole
  const std::string after = Resp({"SET", "k", "v3"});
  CHECK(s.upstream(after, decide, answered) == after);
  // An inline command is no RESP array: passed untouched from there on.
  CHECK(s.upstream("PING\r\n", decide, answered) == "PING\r\n");
  CHECK(s.opaque());
}

TEST_CASE("store-error through a real proxy on a Redis connection: the store gets the EVAL instead of the write", "[injectors][tcp][store-error]") {
  Rig rig;
  Client c(rig.port());
  REQUIRE(c.connected());
  auto fault = Build("store-error");  // no statement: the Redis writes
  REQUIRE(fault->start(rig.context()).ok());
  REQUIRE(c.Echoes(Resp({"GET", "k"})));
  REQUIRE(c.Send(Resp({"SET", "k", "v"})));
  const std::string expected = RespErrorStream("OOM command not allowed when used memory > 'maxmemory'.").eval_command();
  CHECK(c.Recv(expected.size(), 2000ms).bytes == expected);
  CHECK(AwaitEvent(rig.events, "injected") ==
        "answered matching write 1 on connection 1 with -OOM instead of forwarding it: SET k v");
}

TEST_CASE("store-error options are checked at line:column", "[injectors][tcp][store-error]") {
  CHECK(BuildError("store-error: {statement: '(unclosed'}").message().find("bad regex '(unclosed'") != std::string::npos);
  CHECK(BuildError("store-error: {sqlstate: '00000'}").message().find("expected an error SQLSTATE") != std::string::npos);
  CHECK(BuildError("store-error: {sqlstate: 4001}").message().find("expected an error SQLSTATE") != std::string::npos);
  CHECK(BuildError("store-error: {times: 0}").message().find("times") != std::string::npos);
  const auto bad = BuildError("store-error:\n  skip: 1\n  message: \"\\n\"\n");
  CHECK(bad.message().find("printable") != std::string::npos);
  REQUIRE(bad.mark());
  CHECK(bad.mark()->line == 3);
  CHECK(BuildError("store-error: {redis_error: 'lower case'}").message().find("starting with an error code") !=
        std::string::npos);
}
