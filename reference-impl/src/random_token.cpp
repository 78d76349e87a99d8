#include "idemproof/ref/random_token.h"

#include <cstdio>
#include <random>

namespace idemproof::ref {

std::string random_token() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(rng()),
                static_cast<unsigned long long>(rng()));
  return buf;
}

}  // namespace idemproof::ref
