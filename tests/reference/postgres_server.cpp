#include "postgres_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

namespace idemproof::ref::testing {
namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

int free_loopback_port() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    throw std::runtime_error("cannot bind a loopback port");
  }
  close(fd);
  return ntohs(addr.sin_port);
}

// fork/exec `argv` in a process group of its own (so a stop reaches an
// initdb the script is still running), stdout and stderr appended to `log`, a
// minimal environment (C locale). Returns the child's pid.
pid_t spawn(const std::vector<std::string>& argv_strings, const std::string& log) {
  const int log_fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) throw std::runtime_error("cannot open " + log);
  std::vector<std::string> strings = argv_strings;
  std::vector<char*> argv;
  for (auto& s : strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::string env_strings[] = {"LC_ALL=C", "LANG=C", "PATH=/usr/bin:/bin:/usr/sbin:/sbin"};
  std::vector<char*> env;
  for (auto& s : env_strings) env.push_back(s.data());
  env.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    close(log_fd);
    throw std::runtime_error("fork failed");
  }
  if (pid == 0) {
    setpgid(0, 0);
    dup2(log_fd, STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    const int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    execve(argv[0], argv.data(), env.data());
    _exit(127);
  }
  close(log_fd);
  return pid;
}

// waitpid with a deadline: the wait status, or nullopt when still running.
std::optional<int> wait_until(pid_t pid, Clock::time_point deadline) {
  while (true) {
    int status = 0;
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0) return -1;
    if (Clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

PostgresServer::PostgresServer(std::chrono::milliseconds deadline) {
  const auto until = Clock::now() + deadline;
  // As root the script runs the server as nobody, who must reach data/.
  fs::permissions(dir_.path(), fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  const std::string log = dir_.file("postgres.log");
  port_ = free_loopback_port();
  // The script initdb's (a copy of its cached template) and execs the
  // server: pid_ is the postmaster itself.
  pid_ = spawn({"/bin/bash", std::string(IDEMPROOF_SOURCE_DIR) + "/scripts/postgres-service.sh", std::to_string(port_),
                dir_.file("data")},
               log);
  const std::string ping = "host=127.0.0.1 port=" + std::to_string(port_) +
                           " user=postgres dbname=postgres connect_timeout=2";
  while (PQping(ping.c_str()) != PQPING_OK) {
    int status = 0;
    const bool exited = waitpid(pid_, &status, WNOHANG) == pid_;
    if (exited) pid_ = -1;
    if (exited || Clock::now() >= until) {
      stop();  // no destructor runs after a throwing constructor
      const std::string why = exited ? "postgres exited" : "postgres did not accept connections in time";
      throw std::runtime_error(why + "; log:\n" + read_file(log));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

PostgresServer::~PostgresServer() { stop(); }

void PostgresServer::stop() {
  if (pid_ <= 0) return;
  ::kill(-pid_, SIGQUIT);  // immediate shutdown: the data is thrown away anyway
  if (!wait_until(pid_, Clock::now() + std::chrono::seconds(15))) {
    ::kill(-pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  pid_ = -1;
}

std::string PostgresServer::url(const std::string& database) const {
  return "postgresql://postgres@127.0.0.1:" + std::to_string(port_) + "/" + database;
}

void PostgresServer::execute(const std::string& sql) const { query_value(sql); }

std::string PostgresServer::query_value(const std::string& sql) const {
  const std::string conninfo = url() + "?connect_timeout=10";
  std::unique_ptr<PGconn, decltype(&PQfinish)> conn(PQconnectdb(conninfo.c_str()), PQfinish);
  if (PQstatus(conn.get()) != CONNECTION_OK) {
    throw std::runtime_error("connect to the test server: " + std::string(PQerrorMessage(conn.get())));
  }
  std::unique_ptr<PGresult, decltype(&PQclear)> result(PQexec(conn.get(), sql.c_str()), PQclear);
  const auto status = PQresultStatus(result.get());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    throw std::runtime_error(sql + ": " + PQresultErrorMessage(result.get()));
  }
  if (PQntuples(result.get()) == 0 || PQnfields(result.get()) == 0 || PQgetisnull(result.get(), 0, 0)) return "";
  return PQgetvalue(result.get(), 0, 0);
}

std::string PostgresServer::fresh_schema_url() {
  const std::string schema = "run_" + std::to_string(++schemas_);
  execute("CREATE SCHEMA " + schema);
  return url() + "?options=-csearch_path%3D" + schema;
}

}  // namespace idemproof::ref::testing
