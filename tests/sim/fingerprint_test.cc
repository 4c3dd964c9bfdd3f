#include "sim/fingerprint.h"

#include <gtest/gtest.h>

namespace btsim::sim {
namespace {

TEST(FingerprintTest, SameInputsGiveTheSameHex) {
  Fingerprint a, b;
  for (Fingerprint* f : {&a, &b}) {
    f->Add("event");
    f->AddInt(42);
    f->Add(std::string(100, 'x'));
  }
  EXPECT_EQ(a.Hex(), b.Hex());
  EXPECT_EQ(a.Hex().size(), 32u);
}

TEST(FingerprintTest, IsOrderAndBoundarySensitive) {
  Fingerprint ab_c, a_bc, c_ab;
  ab_c.Add("ab");
  ab_c.Add("c");
  a_bc.Add("a");
  a_bc.Add("bc");
  c_ab.Add("c");
  c_ab.Add("ab");
  EXPECT_NE(ab_c.Hex(), a_bc.Hex());
  EXPECT_NE(ab_c.Hex(), c_ab.Hex());
}

TEST(FingerprintTest, DistinguishesEmptyStringFromNothingAndIntsFromBytes) {
  Fingerprint none, empty, zero_int, zero_bytes;
  empty.Add("");
  zero_int.AddInt(0);
  zero_bytes.Add(std::string(8, '\0'));
  EXPECT_NE(none.Hex(), empty.Hex());
  EXPECT_NE(zero_int.Hex(), zero_bytes.Hex());
  EXPECT_NE(empty.Hex(), zero_int.Hex());
}

TEST(FingerprintTest, KnownValueIsPinned) {
  // Pinned so that an accidental change of the hash, which would change
  // every scenario's fingerprint, is noticed.
  Fingerprint f;
  f.Add("btsim");
  f.AddInt(-1);
  EXPECT_EQ(f.Hex(), "5aa16f393a8309396b625ac805108fe8");
}

}  // namespace
}  // namespace btsim::sim
