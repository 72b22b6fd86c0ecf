#include <gtest/gtest.h>

#include "bootstrap/store_table.h"

namespace weft::bootstrap {
namespace {

TEST(StoreTable, GetParksUntilSetAndWakesEveryWaiter) {
  StoreTable t;
  std::vector<StoreTable::Delivery> out;
  EXPECT_TRUE(t.Apply(1, {StoreCmd::kGet, "k", "", 0}, &out));
  EXPECT_TRUE(t.Apply(2, {StoreCmd::kGet, "k", "", 0}, &out));
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(t.parked(), 2u);
  EXPECT_FALSE(t.Apply(3, {StoreCmd::kSet, "k", "v", 0}, &out));
  ASSERT_EQ(out.size(), 3u);  // the Set's ack and both Gets
  EXPECT_EQ(t.parked(), 0u);
  EXPECT_EQ(out[0].conn, 3u);
  EXPECT_EQ(out[1].reply, EncodeReply(StoreReply::kOk, "v"));
}

TEST(StoreTable, ForgetDropsAParkedGet) {
  StoreTable t;
  std::vector<StoreTable::Delivery> out;
  EXPECT_TRUE(t.Apply(1, {StoreCmd::kGet, "k", "", 0}, &out));
  t.Forget(1);
  EXPECT_EQ(t.parked(), 0u);
  t.Apply(2, {StoreCmd::kSet, "k", "v", 0}, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].conn, 2u);
}

TEST(StoreTable, AddCountsAndRejectsNonIntegers) {
  StoreTable t;
  std::vector<StoreTable::Delivery> out;
  t.Apply(1, {StoreCmd::kAdd, "c", "", 5}, &out);
  t.Apply(1, {StoreCmd::kAdd, "c", "", -2}, &out);
  std::string three;
  PutI64(three, 3);
  EXPECT_EQ(out.back().reply, EncodeReply(StoreReply::kOk, three));
  t.Apply(1, {StoreCmd::kSet, "s", "abc", 0}, &out);
  t.Apply(1, {StoreCmd::kAdd, "s", "", 1}, &out);
  EXPECT_EQ(out.back().reply[4], static_cast<char>(StoreReply::kError));
  t.Apply(1, {StoreCmd::kSet, "big", "9223372036854775807", 0}, &out);
  t.Apply(1, {StoreCmd::kAdd, "big", "", 1}, &out);
  EXPECT_EQ(out.back().reply[4], static_cast<char>(StoreReply::kError));
}

}  // namespace
}  // namespace weft::bootstrap
