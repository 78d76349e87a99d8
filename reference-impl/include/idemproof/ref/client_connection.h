// The connection of the request a worker thread is handling, as the HTTP/1.1
// server hands it over (ScopedClientConnection around handle_request), so a
// flaw can ask whether the client is still there: `abort-stores-empty`
// stores what a middleware that captures the answer from its response stream
// would, once the client has gone.
#pragma once

namespace idemproof::ref {

// True when the current thread handles a request whose client has closed its
// side of the connection (an orderly FIN, or a reset): a non-blocking peek
// reads end-of-stream or fails. False with no connection in scope (h2c, tests
// calling the service directly) or while the client is still connected.
bool client_gone();

// Puts `fd` in scope for the current thread for this object's life.
// REQUIRES: one per thread at a time; fd stays open while in scope.
class ScopedClientConnection {
 public:
  explicit ScopedClientConnection(int fd);
  ~ScopedClientConnection();
  ScopedClientConnection(const ScopedClientConnection&) = delete;
  ScopedClientConnection& operator=(const ScopedClientConnection&) = delete;
};

}  // namespace idemproof::ref
