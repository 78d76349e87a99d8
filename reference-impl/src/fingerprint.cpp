#include "idemproof/ref/fingerprint.h"

#include <openssl/evp.h>

#include <stdexcept>

namespace idemproof::ref {

std::string sha256_hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("EVP_Digest(sha256) failed");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(length * 2);
  for (unsigned int i = 0; i < length; ++i) {
    hex.push_back(kHex[digest[i] >> 4]);
    hex.push_back(kHex[digest[i] & 0xF]);
  }
  return hex;
}

std::string request_fingerprint(std::string_view method, std::string_view path,
                                std::string_view canonical_body) {
  std::string input;
  input.reserve(method.size() + path.size() + canonical_body.size() + 2);
  input.append(method).append("\n").append(path).append("\n").append(canonical_body);
  return sha256_hex(input);
}

}  // namespace idemproof::ref
