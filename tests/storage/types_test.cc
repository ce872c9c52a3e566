// Copyright 2026 The Sieve Authors.
//
// Status text and enum names (storage/types.cc) and storage/column.cc.

#include "sieve/types.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sieve/db.h"
#include "sieve/status.h"
#include "storage/column.h"

namespace sieve {
namespace {

TEST(StatusTest, ToString) {
  EXPECT_EQ(Status::OK().ToString(), "OK");
  EXPECT_EQ(Status::NotFound("no x").ToString(), "NotFound: no x");
  EXPECT_EQ(Status::InvalidArgument("bad").ToString(), "InvalidArgument: bad");
  EXPECT_EQ(Status::IOError("disk").WithContext("write").ToString(), "IOError: write: disk");
  EXPECT_EQ(Status::Corruption("c").ToString(), "Corruption: c");
  EXPECT_EQ(Status::Unavailable("gpu").ToString(), "Unavailable: gpu");
}

template <typename E>
void ExpectRoundTrip(const std::vector<std::pair<std::string, E>>& table, const char* (*name)(E),
                     Status (*parse)(std::string_view, E*)) {
  for (const auto& [text, value] : table) {
    EXPECT_EQ(std::string(name(value)), text);
    E out{};
    ASSERT_TRUE(parse(text, &out).ok()) << text;
    EXPECT_EQ(out, value) << text;
  }
  E out{};
  Status s = parse("Bogus", &out);
  ASSERT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("'Bogus'"), std::string::npos) << s.message();
  for (const auto& [text, value] : table) {
    EXPECT_NE(s.message().find(text), std::string::npos) << s.message();
  }
  // Names are case-sensitive and exact.
  EXPECT_FALSE(parse(table.front().first + " ", &out).ok());
}

TEST(EnumNamesTest, ParseAndNameRoundTrip) {
  ExpectRoundTrip<Metric>(
      {{"l2", Metric::kL2}, {"ip", Metric::kInnerProduct}, {"cosine", Metric::kCosine}}, MetricName,
      ParseMetric);
  ExpectRoundTrip<DType>({{"f32", DType::kFloat32}, {"f16", DType::kFloat16}}, DTypeName,
                         ParseDType);
  ExpectRoundTrip<AttrType>({{"int", AttrType::kInt},
                             {"float", AttrType::kFloat},
                             {"string", AttrType::kString},
                             {"bool", AttrType::kBool},
                             {"tags", AttrType::kTags}},
                            AttrTypeName, ParseAttrType);
  ExpectRoundTrip<Device>({{"auto", Device::kAuto}, {"cpu", Device::kCpu}, {"gpu", Device::kGpu}},
                          DeviceName, ParseDevice);
  ExpectRoundTrip<SearchPath>({{"auto", SearchPath::kAuto},
                               {"sddmm", SearchPath::kSddmm},
                               {"gather", SearchPath::kGather},
                               {"dense", SearchPath::kDense}},
                              SearchPathName, ParseSearchPath);
}

TEST(ColumnTest, AppendAndGetEveryType) {
  Column ints;
  ints.type = AttrType::kInt;
  ints.Append(int64_t{7});
  ints.Append(Value());
  ASSERT_EQ(ints.size(), 2u);
  EXPECT_EQ(ints.Get(0), Value(int64_t{7}));
  EXPECT_TRUE(IsNull(ints.Get(1)));
  EXPECT_EQ(ints.ints[1], 0);

  Column bools;
  bools.type = AttrType::kBool;
  bools.Append(true);
  bools.Append(false);
  bools.Append(Value());
  EXPECT_EQ(bools.Get(0), Value(true));
  EXPECT_EQ(bools.Get(1), Value(false));
  EXPECT_TRUE(IsNull(bools.Get(2)));
  EXPECT_EQ(bools.ints, (std::vector<int64_t>{1, 0, 0}));

  Column floats;
  floats.type = AttrType::kFloat;
  floats.Append(2.5);
  EXPECT_EQ(floats.Get(0), Value(2.5));

  Column strings;
  strings.type = AttrType::kString;
  strings.Append(std::string("x"));
  strings.Append(Value());
  EXPECT_EQ(strings.Get(0), Value(std::string("x")));
  EXPECT_TRUE(IsNull(strings.Get(1)));

  Column tags;
  tags.type = AttrType::kTags;
  tags.Append(std::vector<std::string>{});
  tags.Append(std::vector<std::string>{"a", "b"});
  EXPECT_EQ(tags.Get(0), Value(std::vector<std::string>{}));
  EXPECT_FALSE(IsNull(tags.Get(0)));
  EXPECT_EQ(tags.Get(1), Value(std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(IsNull(tags.Get(5)));  // out of range reads as null
}

}  // namespace
}  // namespace sieve
