// HMAC-SHA256 (libcrypto, core/hmac.h) against the published vectors (RFC 4231) and
// against Python's hmac on random keys and messages of every length around the
// block boundaries, empty ones included.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/hmac.h"

namespace weft {
namespace {

std::string Hex(const Digest256& d) {
  static const char* kDigits = "0123456789abcdef";
  std::string s;
  for (uint8_t b : d) {
    s += kDigits[b >> 4];
    s += kDigits[b & 15];
  }
  return s;
}

std::string Unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

// The builder's pieces give the MAC of their concatenation, wherever the cut falls.
TEST(HmacTest, PiecesEqualTheWhole) {
  const std::string key = "the job's secret";
  std::string data(300, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7);
  for (size_t cut = 0; cut <= data.size(); cut += 13) {
    HmacSha256Builder b(key);
    b.Update(std::string_view(data).substr(0, cut)).Update(std::string_view(data).substr(cut));
    EXPECT_EQ(Hex(b.Final()), Hex(HmacSha256(key, data))) << "cut at " << cut;
  }
}

// RFC 4231 section 4: test cases 1-4, 6 and 7 (case 5 truncates the output).
TEST(HmacTest, Rfc4231) {
  struct Case {
    std::string key, data, mac;
  };
  const std::vector<Case> cases = {
      {std::string(20, '\x0b'), "Hi There",
       "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
      {"Jefe", "what do ya want for nothing?",
       "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
      {std::string(20, '\xaa'), std::string(50, '\xdd'),
       "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
      {Unhex("0102030405060708090a0b0c0d0e0f10111213141516171819"), std::string(50, '\xcd'),
       "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"},
      {std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First",
       "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
      {std::string(131, '\xaa'),
       "This is a test using a larger than block-size key and a larger than block-size "
       "data. The key needs to be hashed before being used by the HMAC algorithm.",
       "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"},
  };
  for (const Case& c : cases) EXPECT_EQ(Hex(HmacSha256(c.key, c.data)), c.mac) << c.data;
}

TEST(HmacTest, ConstantTimeEqual) {
  std::string a = "0123456789abcdef", b = a;
  EXPECT_TRUE(ConstantTimeEqual(a.data(), b.data(), a.size()));
  for (size_t i = 0; i < a.size(); ++i) {
    b = a;
    b[i] ^= 1;
    EXPECT_FALSE(ConstantTimeEqual(a.data(), b.data(), a.size())) << i;
  }
  EXPECT_TRUE(ConstantTimeEqual(a.data(), b.data(), 0));
}

// Random keys and messages, hashed here and by python3; skipped where python3 is absent.
TEST(HmacTest, AgreesWithPython) {
  if (std::system("python3 -c 'import hashlib, hmac' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "python3 not available";
  std::mt19937 rng(20261130);
  std::vector<std::pair<std::string, std::string>> inputs;
  for (int i = 0; i < 300; ++i) {
    // Lengths around the 64-byte block and the 56-byte padding boundary, then larger.
    size_t key_len = rng() % 150;
    size_t msg_len = i < 200 ? static_cast<size_t>(i) : rng() % 5000;
    std::string key(key_len, '\0'), msg(msg_len, '\0');
    for (char& c : key) c = static_cast<char>(rng());
    for (char& c : msg) c = static_cast<char>(rng());
    inputs.emplace_back(key, msg);
  }
  char path[] = "/tmp/weft_hmac_XXXXXX";
  int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  FILE* f = ::fdopen(fd, "w");
  auto hex = [](const std::string& s) {
    std::string out;
    char buf[3];
    for (unsigned char c : s) {
      std::snprintf(buf, sizeof(buf), "%02x", c);
      out += buf;
    }
    return out;
  };
  for (auto& [k, m] : inputs) std::fprintf(f, "%s %s\n", hex(k).c_str(), hex(m).c_str());
  std::fclose(f);
  std::string cmd = std::string("python3 -c \"import sys, hashlib, hmac\n"
                                "for line in open(sys.argv[1]):\n"
                                "  k, m = (bytes.fromhex(x) for x in line.split(' '))\n"
                                "  print(hmac.new(k, m, hashlib.sha256).hexdigest())\" ") +
                    path;
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  char mac[65];
  size_t n = 0;
  while (n < inputs.size() && std::fscanf(p, "%64s", mac) == 1) {
    EXPECT_EQ(Hex(HmacSha256(inputs[n].first, inputs[n].second)), mac) << "input " << n;
    ++n;
  }
  ::pclose(p);
  ::unlink(path);
  EXPECT_EQ(n, inputs.size());
}

}  // namespace
}  // namespace weft
