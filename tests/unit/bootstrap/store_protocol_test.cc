#include <gtest/gtest.h>

#include "bootstrap/store_protocol.h"

namespace weft::bootstrap {
namespace {

std::string Frame(uint8_t cmd, const std::string& body_after_cmd) {
  std::string out;
  PutU32(out, static_cast<uint32_t>(1 + body_after_cmd.size()));
  out.push_back(static_cast<char>(cmd));
  return out + body_after_cmd;
}

std::string KeyField(const std::string& key) {
  std::string s;
  PutU32(s, static_cast<uint32_t>(key.size()));
  return s + key;
}

TEST(StoreProtocol, RoundTripsEveryCommand) {
  for (StoreRequest r : {StoreRequest{StoreCmd::kSet, "k", std::string("v\0w", 3), 0},
                         StoreRequest{StoreCmd::kGet, "some/key", "", 0},
                         StoreRequest{StoreCmd::kAdd, "ctr", "", -42},
                         StoreRequest{StoreCmd::kCheck, "x", "", 0}}) {
    std::string bytes = EncodeRequest(r);
    auto p = ParseRequest(bytes, 1 << 20);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    EXPECT_EQ(p->consumed, bytes.size());
    EXPECT_EQ(p->request.cmd, r.cmd);
    EXPECT_EQ(p->request.key, r.key);
    EXPECT_EQ(p->request.value, r.value);
    EXPECT_EQ(p->request.arg, r.arg);
  }
}

TEST(StoreProtocol, EveryPrefixIsIncomplete) {
  std::string bytes = EncodeRequest({StoreCmd::kSet, "key", "value", 0});
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto p = ParseRequest(std::string_view(bytes).substr(0, n), 1 << 20);
    ASSERT_TRUE(p.ok()) << n;
    EXPECT_EQ(p->consumed, 0u) << n;
  }
}

TEST(StoreProtocol, ParsesFirstOfTwoFrames) {
  std::string a = EncodeRequest({StoreCmd::kGet, "a", "", 0});
  std::string b = EncodeRequest({StoreCmd::kCheck, "b", "", 0});
  auto p = ParseRequest(a + b, 1 << 20);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->consumed, a.size());
  EXPECT_EQ(p->request.key, "a");
}

TEST(StoreProtocol, RejectsOversizedFrameFromItsHeaderAlone) {
  std::string bytes;
  PutU32(bytes, 1000);
  auto p = ParseRequest(bytes, 999);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), Code::kProtocolError);
  PutU32(bytes, 0xffffffffu);
  EXPECT_FALSE(ParseRequest(bytes.substr(4), 1 << 20).ok());
}

TEST(StoreProtocol, RejectsMalformed) {
  std::string set_tail;
  PutU32(set_tail, 1);
  set_tail += "v";
  PutI64(set_tail, 0);
  std::string add_with_value = KeyField("k") + set_tail;  // kAdd must not carry a value
  std::string key_overrun;
  PutU32(key_overrun, 100);
  key_overrun += "abc";
  std::string val_overrun = KeyField("k");
  PutU32(val_overrun, 50);
  val_overrun += "xx";
  PutI64(val_overrun, 0);
  std::string short_frame;
  PutU32(short_frame, 3);
  short_frame += "abc";
  std::string huge_key;
  PutU32(huge_key, static_cast<uint32_t>(kMaxKeyLen + 1));
  huge_key += std::string(kMaxKeyLen + 1, 'k');

  const std::vector<std::pair<const char*, std::string>> cases = {
      {"unknown command", Frame(9, KeyField("k"))},
      {"zero command", Frame(0, KeyField("k"))},
      {"empty key", Frame(2, KeyField(""))},
      {"key overruns", Frame(2, key_overrun)},
      {"value overruns", Frame(1, val_overrun)},
      {"set without tail", Frame(1, KeyField("k"))},
      {"set without arg", Frame(1, KeyField("k") + std::string("\1\0\0\0v", 5))},
      {"get with trailing bytes", Frame(2, KeyField("k") + "zz")},
      {"add with value", Frame(3, add_with_value)},
      {"frame shorter than header", short_frame},
      {"key too long", Frame(2, huge_key)},
  };
  for (const auto& [name, bytes] : cases) {
    auto p = ParseRequest(bytes, 1 << 20);
    EXPECT_FALSE(p.ok()) << name;
    if (!p.ok()) {
      EXPECT_EQ(p.status().code(), Code::kProtocolError) << name;
    }
  }
}

TEST(StoreProtocol, EncodesReplies) {
  std::string r = EncodeReply(StoreReply::kOk, "abc");
  ASSERT_EQ(r.size(), 8u);
  EXPECT_EQ(GetU32(r.data()), 4u);
  EXPECT_EQ(r[4], 0);
  EXPECT_EQ(r.substr(5), "abc");
}

TEST(StoreProtocol, LittleEndianHelpers) {
  std::string s;
  PutU32(s, 0x01020304u);
  EXPECT_EQ(s, std::string("\x04\x03\x02\x01", 4));
  EXPECT_EQ(GetU32(s.data()), 0x01020304u);
  s.clear();
  PutI64(s, -2);
  EXPECT_EQ(GetI64(s.data()), -2);
}

}  // namespace
}  // namespace weft::bootstrap
