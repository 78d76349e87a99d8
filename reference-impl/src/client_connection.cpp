#include "idemproof/ref/client_connection.h"

#include <sys/socket.h>

#include <cerrno>

namespace idemproof::ref {
namespace {
thread_local int current_fd = -1;
}  // namespace

bool client_gone() {
  if (current_fd < 0) return false;
  char byte = 0;
  const ssize_t n = ::recv(current_fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n == 0) return true;  // end of stream: the client closed
  if (n < 0) return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;  // reset
  return false;  // bytes waiting (a pipelined request): still there
}

ScopedClientConnection::ScopedClientConnection(int fd) { current_fd = fd; }
ScopedClientConnection::~ScopedClientConnection() { current_fd = -1; }

}  // namespace idemproof::ref
