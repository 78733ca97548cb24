#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "hyloop/hal/rsi_codec.hpp"

namespace hyloop::hal {
namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes bytes(std::string_view s) { return {s.begin(), s.end()}; }
std::string text(const Bytes& b) { return {b.begin(), b.end()}; }

// ---- codec ----------------------------------------------------------------------------------

// A <Rob> as the KUKA examples lay it out: one element a line, Tech and DiL sent too (skipped).
const std::string kRob =
    "<Rob Type=\"KUKA\">\r\n"
    "  <RIst X=\"445.5\" Y=\"-12.25\" Z=\"890.0\" A=\"180.0\" B=\"0.0\" C=\"90.0\"/>\r\n"
    "  <RSol X=\"445.0\" Y=\"-12.0\" Z=\"890.0\" A=\"180.0\" B=\"0.0\" C=\"90.0\"/>\r\n"
    "  <AIPos A1=\"0.0\" A2=\"-90.0\" A3=\"90.0\" A4=\"0.0\" A5=\"90.0\" A6=\"0.0\"/>\r\n"
    "  <ASPos A1='0.0' A2='-90.0' A3='90.0' A4='0.0' A5='90.0' A6='1.5'/>\r\n"
    "  <Tech C11=\"0.0\" C12=\"0.0\"><T>1</T></Tech>\r\n"
    "  <DiL>0</DiL>\r\n"
    "  <Delay D=\"3\"/>\r\n"
    "  <IPOC>3393226</IPOC>\r\n"
    "</Rob>";

TEST(RsiCodec, ParsesAHandWrittenRobFrame) {
  rsi::RobotFrame f;
  ASSERT_EQ(rsi::parse_robot(bytes(kRob), f), rsi::ParseResult::kOk);
  EXPECT_EQ(f.ipoc, 3393226U);
  EXPECT_TRUE(f.has_rist && f.has_rsol && f.has_aipos && f.has_aspos && f.has_delay);
  EXPECT_EQ(f.rist, (rsi::Values{445.5, -12.25, 890.0, 180.0, 0.0, 90.0}));
  EXPECT_EQ(f.rsol[1], -12.0);
  EXPECT_EQ(f.aipos, (rsi::Values{0.0, -90.0, 90.0, 0.0, 90.0, 0.0}));
  EXPECT_EQ(f.aspos[5], 1.5);
  EXPECT_EQ(f.delay, 3U);
  // With a declaration and a comment, and only what a minimal SEND section carries.
  const std::string minimal =
      "<?xml version=\"1.0\"?><!-- c --><Rob Type=\"KUKA\"><AIPos A1=\"1\" A2=\"2\" A3=\"3\" "
      "A4=\"4\" A5=\"5\" A6=\"+6e0\" /><IPOC> 12 </IPOC></Rob>\n";
  rsi::RobotFrame m;
  ASSERT_EQ(rsi::parse_robot(bytes(minimal), m), rsi::ParseResult::kOk);
  EXPECT_FALSE(m.has_rist);
  EXPECT_EQ(m.aipos, (rsi::Values{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(m.ipoc, 12U);
}

TEST(RsiCodec, WritesTheRobFrameByteExact) {
  const std::string golden =
      "<Rob Type=\"KUKA\">"
      "<RIst X=\"445.5000\" Y=\"-12.2500\" Z=\"890.0000\" A=\"180.0000\" B=\"0.0000\" "
      "C=\"90.0000\"/>"
      "<AIPos A1=\"0.0000\" A2=\"-90.0000\" A3=\"90.0000\" A4=\"0.0000\" A5=\"90.0000\" "
      "A6=\"0.0000\"/>"
      "<Delay D=\"3\"/><IPOC>3393226</IPOC></Rob>";
  rsi::RobotFrame f;
  f.has_rist = f.has_aipos = f.has_delay = true;
  f.rist = {445.5, -12.25, 890.0, 180.0, 0.0, 90.0};
  f.aipos = {0.0, -90.0, 90.0, 0.0, 90.0, 0.0};
  f.delay = 3;
  f.ipoc = 3393226;
  Bytes out(rsi::kMaxDatagram);
  out.resize(rsi::write_robot(f, out));
  EXPECT_EQ(text(out), golden);
  rsi::RobotFrame back;
  ASSERT_EQ(rsi::parse_robot(out, back), rsi::ParseResult::kOk);
  EXPECT_EQ(back.rist, f.rist);
  EXPECT_EQ(back.aipos, f.aipos);
  EXPECT_FALSE(back.has_rsol);
}

TEST(RsiCodec, WritesTheSenFrameByteExactAndEchoesTheIpoc) {
  const std::string cartesian =
      "<Sen Type=\"ImFree\"><RKorr X=\"0.000000\" Y=\"0.000000\" Z=\"12.500000\" A=\"0.000000\" "
      "B=\"0.000000\" C=\"-0.125000\"/><IPOC>3393230</IPOC></Sen>";
  rsi::SensorFrame s;
  s.ipoc = 3393230;
  s.correction = {0.0, 0.0, 12.5, 0.0, 0.0, -0.125};
  Bytes out(rsi::kMaxDatagram);
  out.resize(rsi::write_sensor(s, {}, out));
  EXPECT_EQ(text(out), cartesian);
  rsi::SensorFrame back;
  ASSERT_EQ(rsi::parse_sensor(out, {}, back), rsi::ParseResult::kOk);
  EXPECT_EQ(back.ipoc, 3393230U);
  EXPECT_EQ(back.correction, s.correction);

  const std::string axis =
      "<Sen Type=\"Lab\"><AK A1=\"0.000000\" A2=\"0.000000\" A3=\"5.729578\" A4=\"0.000000\" "
      "A5=\"0.000000\" A6=\"0.000000\"/><IPOC>8</IPOC></Sen>";
  const rsi::SensorFormat ak{"Lab", "AK", true};
  s = {};
  s.ipoc = 8;
  s.correction[2] = 0.1 * 180.0 / std::numbers::pi;
  out.assign(rsi::kMaxDatagram, 0);
  out.resize(rsi::write_sensor(s, ak, out));
  EXPECT_EQ(text(out), axis);
  ASSERT_EQ(rsi::parse_sensor(out, ak, back), rsi::ParseResult::kOk);
  EXPECT_EQ(back.correction[2], 5.729578);
  EXPECT_EQ(rsi::parse_sensor(out, {}, back), rsi::ParseResult::kWrongType) << "Type ImFree";
}

TEST(RsiCodec, WritersRefuseWhatDoesNotFit) {
  rsi::SensorFrame s;
  s.correction[0] = 1e9;
  Bytes out(rsi::kMaxDatagram);
  EXPECT_EQ(rsi::write_sensor(s, {}, out), 0U);
  s.correction[0] = std::nan("");
  EXPECT_EQ(rsi::write_sensor(s, {}, out), 0U);
  s.correction[0] = 0.0;
  EXPECT_EQ(rsi::write_sensor(s, {"Im\"Free", "RKorr", false}, out), 0U);
  EXPECT_EQ(rsi::write_sensor(s, {"ImFree", "R Korr", false}, out), 0U);
  Bytes small(40);
  EXPECT_EQ(rsi::write_sensor(s, {}, small), 0U);
}

TEST(RsiCodec, RefusesMalformedForeignAndIncompleteDocuments) {
  const auto robot = [](const std::string& doc) {
    rsi::RobotFrame f;
    return rsi::parse_robot(bytes(doc), f);
  };
  using R = rsi::ParseResult;
  const std::string ipoc = "<IPOC>4</IPOC>";
  const std::string pose = "<RIst X=\"1\" Y=\"2\" Z=\"3\" A=\"4\" B=\"5\" C=\"6\"/>";
  EXPECT_EQ(robot("<Rob>" + pose + ipoc + "</Rob>"), R::kOk);
  EXPECT_EQ(robot("<Sen Type=\"ImFree\">" + ipoc + "</Sen>"), R::kWrongType);
  EXPECT_EQ(robot("<Rob>" + pose + "</Rob>"), R::kIncomplete) << "no IPOC";
  EXPECT_EQ(robot("<Rob><RIst X=\"1\" Y=\"2\" Z=\"3\" A=\"4\" B=\"5\"/>" + ipoc + "</Rob>"),
            R::kMalformed)
      << "C missing";
  EXPECT_EQ(
      robot("<Rob><RIst X=\"nan\" Y=\"2\" Z=\"3\" A=\"4\" B=\"5\" C=\"6\"/>" + ipoc + "</Rob>"),
      R::kMalformed);
  EXPECT_EQ(
      robot("<Rob><RIst X=\"1e999\" Y=\"2\" Z=\"3\" A=\"4\" B=\"5\" C=\"6\"/>" + ipoc + "</Rob>"),
      R::kMalformed);
  EXPECT_EQ(
      robot("<Rob><RIst X=\"1mm\" Y=\"2\" Z=\"3\" A=\"4\" B=\"5\" C=\"6\"/>" + ipoc + "</Rob>"),
      R::kMalformed);
  EXPECT_EQ(robot("<Rob>" + pose + pose + ipoc + "</Rob>"), R::kMalformed) << "twice";
  EXPECT_EQ(robot("<Rob>" + pose + ipoc + ipoc + "</Rob>"), R::kMalformed);
  EXPECT_EQ(robot("<Rob>" + pose + "<IPOC>-4</IPOC></Rob>"), R::kMalformed);
  EXPECT_EQ(robot("<Rob>" + pose + "<IPOC>99999999999999999999999</IPOC></Rob>"), R::kMalformed);
  EXPECT_EQ(robot("<Rob>" + pose + ipoc + "</Rob><Rob/>"), R::kMalformed) << "two roots";
  EXPECT_EQ(robot("<Rob>" + pose + ipoc + "</Rob>x"), R::kMalformed);
  EXPECT_EQ(robot("<Rob>" + pose + ipoc + "</Bob>"), R::kMalformed);
  EXPECT_EQ(robot("<Rob X=\"1\" X=\"2\">" + pose + ipoc + "</Rob>"), R::kMalformed);
  EXPECT_EQ(robot("<Rob X=\"1\"Y=\"2\">" + pose + ipoc + "</Rob>"), R::kMalformed);
  EXPECT_EQ(robot("<Rob X=\"<\">" + pose + ipoc + "</Rob>"), R::kMalformed);
  EXPECT_EQ(robot("<!DOCTYPE Rob><Rob>" + pose + ipoc + "</Rob>"), R::kMalformed);
  EXPECT_EQ(robot("<Rob><![CDATA[x]]>" + pose + ipoc + "</Rob>"), R::kMalformed);
  EXPECT_EQ(robot(""), R::kMalformed);
  EXPECT_EQ(robot(std::string("<Rob>\0</Rob>", 12)), R::kMalformed);
}

TEST(RsiCodec, BoundsOnSizeDepthElementsAttributesAndNames) {
  const auto robot = [](const std::string& doc) {
    rsi::RobotFrame f;
    return rsi::parse_robot(bytes(doc), f);
  };
  using R = rsi::ParseResult;
  const std::string tail = "<IPOC>4</IPOC></Rob>";
  std::string deep = "<Rob>";
  for (int i = 0; i < 7; ++i) deep += "<a>";
  for (int i = 0; i < 7; ++i) deep += "</a>";
  EXPECT_EQ(robot(deep + tail), R::kOk) << "8 levels";
  deep = "<Rob>";
  for (int i = 0; i < 8; ++i) deep += "<a>";
  for (int i = 0; i < 8; ++i) deep += "</a>";
  EXPECT_EQ(robot(deep + tail), R::kMalformed) << "9 levels";
  std::string many = "<Rob>";
  for (int i = 0; i < 62; ++i) many += "<a/>";
  EXPECT_EQ(robot(many + tail), R::kOk) << "64 elements";
  EXPECT_EQ(robot(many + "<a/>" + tail), R::kMalformed) << "65 elements";
  std::string attributes = "<Rob";
  for (int i = 0; i < 16; ++i) attributes += " a" + std::to_string(i) + "=\"0\"";
  EXPECT_EQ(robot(attributes + ">" + tail), R::kOk);
  EXPECT_EQ(robot(attributes + " b=\"0\">" + tail), R::kMalformed) << "17 attributes";
  EXPECT_EQ(robot("<Rob><" + std::string(32, 'n') + "/>" + tail), R::kOk);
  EXPECT_EQ(robot("<Rob><" + std::string(33, 'n') + "/>" + tail), R::kMalformed);
  std::string big = "<Rob>" + tail;
  big.insert(5, rsi::kMaxDatagram - big.size(), ' ');
  EXPECT_EQ(robot(big), R::kOk) << big.size();
  big.insert(5, " ");
  EXPECT_EQ(robot(big), R::kMalformed) << "oversized";
}

TEST(RsiCodec, EveryTruncationAndEveryByteReplacedIsRefusedOrFinite) {
  const Bytes golden = bytes(kRob);
  for (std::size_t n = 0; n < golden.size(); ++n) {
    rsi::RobotFrame f;
    EXPECT_NE(rsi::parse_robot({golden.data(), n}, f), rsi::ParseResult::kOk) << "cut at " << n;
  }
  std::size_t accepted = 0;
  for (std::size_t i = 0; i < golden.size(); ++i) {
    for (char c : std::string_view("<>/\"= x9-.\0\xff", 12)) {
      Bytes b = golden;
      b[i] = static_cast<std::uint8_t>(c);
      rsi::RobotFrame f;
      if (rsi::parse_robot(b, f) == rsi::ParseResult::kOk) {
        ++accepted;
        for (double v : f.rist) EXPECT_TRUE(std::isfinite(v)) << "byte " << i;
        for (double v : f.aipos) EXPECT_TRUE(std::isfinite(v)) << "byte " << i;
      }
    }
  }
  EXPECT_GT(accepted, 0U) << "digits replaced by digits, white space by white space";
}

}  // namespace
}  // namespace hyloop::hal
