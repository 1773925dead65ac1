// ts::gate verdicts: worker outcome first, findings by priority, then the timing judgement.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ts/gate/verdict.hpp"

namespace ts::gate {
namespace {

PhaseEvidence timed_evidence(double base_ms, double cand_ms, std::size_t n) {
  PhaseEvidence e;
  e.phase = "evaluate";
  e.worker.completed = true;
  e.timed = true;
  for (std::size_t i = 0; i < n; ++i) {
    double jitter = 1.0 + 0.002 * static_cast<double>(i % 5);  // deterministic small noise
    e.baseline_ms.push_back(base_ms * jitter);
    e.candidate_ms.push_back(cand_ms * (2.0 - jitter));
  }
  return e;
}

TEST(GateVerdict, FailureKindNamesRoundTrip) {
  for (int k = 0; k <= static_cast<int>(FailureKind::none); ++k) {
    auto kind = static_cast<FailureKind>(k);
    auto parsed = parse_failure_kind(failure_kind_name(kind));
    ASSERT_TRUE(parsed) << failure_kind_name(kind);
    EXPECT_EQ(*parsed, kind);
  }
  auto bad = parse_failure_kind("fast");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, Errc::invalid_argument);
}

TEST(GateVerdict, WorkerEndExplainsEverything) {
  PhaseEvidence e = timed_evidence(2.0, 1.0, 40);
  e.worker = WorkerOutcome{.completed = false,
                           .timed_out = true,
                           .term_signal = 0,
                           .exit_code = 0,
                           .detail = "deadline 5 s"};
  e.findings.push_back({FailureKind::incorrect, "zeros", "x"});
  PhaseVerdict v = judge_phase(e);
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.kind, FailureKind::timeout);

  e.worker = WorkerOutcome{};
  e.worker.term_signal = 11;
  v = judge_phase(e);
  EXPECT_EQ(v.kind, FailureKind::crashed);
  EXPECT_NE(v.detail.find("signal 11"), std::string::npos);

  e.worker = WorkerOutcome{};
  EXPECT_EQ(judge_phase(e).kind, FailureKind::protocol);
}

TEST(GateVerdict, FirstFindingByPriorityNamesTheReason) {
  PhaseEvidence e = timed_evidence(2.0, 1.0, 40);
  e.findings.push_back({FailureKind::incorrect, "zeros", "out[0] max abs err 3e-1 > 1e-2"});
  e.findings.push_back({FailureKind::aliasing, "normal", "out[2] must be input 0"});
  e.findings.push_back({FailureKind::incorrect, "normal", "later"});
  PhaseVerdict v = judge_phase(e);
  EXPECT_EQ(v.kind, FailureKind::aliasing);
  EXPECT_EQ(v.detail, "normal: out[2] must be input 0; 2 more findings");
  GateVerdict g = decide(v, nullptr);
  EXPECT_FALSE(g.accept);
  EXPECT_EQ(g.reason, "rejected: aliasing (normal: out[2] must be input 0; 2 more findings)");
}

TEST(GateVerdict, FasterAndConfirmedAccepts) {
  PhaseVerdict m = judge_phase(timed_evidence(2.0, 1.0, 40));
  ASSERT_TRUE(m.passed) << m.detail;
  ASSERT_TRUE(m.stats);
  PhaseEvidence ce = timed_evidence(2.0, 1.0, 40);
  ce.phase = "confirm";
  PhaseVerdict c = judge_phase(ce);
  GateVerdict g = decide(m, &c);
  EXPECT_TRUE(g.accept);
  EXPECT_TRUE(g.confirmed);
  EXPECT_NEAR(g.speedup, 2.0, 0.05);
  EXPECT_EQ(g.reason.rfind("accepted: 2.0", 0), 0u) << g.reason;
  EXPECT_NE(g.reason.find("confirmed"), std::string::npos);
}

TEST(GateVerdict, NoConfirmationRejectsWhenRequired) {
  PhaseVerdict m = judge_phase(timed_evidence(2.0, 1.0, 40));
  GateVerdict g = decide(m, nullptr, true);
  EXPECT_FALSE(g.accept);
  EXPECT_EQ(g.kind, FailureKind::unconfirmed);
  EXPECT_TRUE(decide(m, nullptr, false).accept);
}

TEST(GateVerdict, ConfirmationMustClearTheThresholdToo) {
  PhaseVerdict m = judge_phase(timed_evidence(2.0, 1.0, 40));
  PhaseEvidence ce = timed_evidence(1.0, 1.0, 40);
  ce.phase = "confirm";
  PhaseVerdict c = judge_phase(ce);
  EXPECT_FALSE(c.passed);
  GateVerdict g = decide(m, &c);
  EXPECT_FALSE(g.accept);
  EXPECT_EQ(g.kind, FailureKind::not_faster);
  EXPECT_EQ(g.reason.rfind("rejected: not_faster (confirmation: ", 0), 0u) << g.reason;
}

TEST(GateVerdict, IdenticalTimesAreNotFaster) {
  PhaseVerdict v = judge_phase(timed_evidence(1.0, 1.0, 60));
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.kind, FailureKind::not_faster);
}

TEST(GateVerdict, ImprovementBelowThresholdAtLowerBoundRejects) {
  // 1.5% faster: below the 2% threshold even at the median.
  PhaseVerdict v = judge_phase(timed_evidence(1.0, 0.985, 60), {.min_improvement = 0.02});
  EXPECT_EQ(v.kind, FailureKind::not_faster);
  EXPECT_TRUE(judge_phase(timed_evidence(1.0, 0.985, 60), {.min_improvement = 0.001}).passed);
}

TEST(GateVerdict, TooFewPairs) {
  EXPECT_EQ(judge_phase(timed_evidence(2.0, 1.0, 8)).kind, FailureKind::too_few_samples);
}

TEST(GateVerdict, SamplesLongerThanTheHostSawAreSuspicious) {
  PhaseEvidence e = timed_evidence(20.0, 10.0, 40);  // 1.2 s of samples
  e.host_wall_s = 0.5;
  PhaseVerdict v = judge_phase(e);
  EXPECT_EQ(v.kind, FailureKind::timing_suspicious);
  e.host_wall_s = 3.0;
  EXPECT_TRUE(judge_phase(e).passed);
}

TEST(GateVerdict, SideStreamWorkFailsTheWallClockCrossCheck) {
  PhaseEvidence e = timed_evidence(2.0, 0.5, 40);
  // Baseline events explain 90% of its wall time, the candidate's only 10%.
  e.wall_clock = WallClockSums{.baseline_event_ms = 72,
                               .baseline_wall_ms = 80,
                               .candidate_event_ms = 2,
                               .candidate_wall_ms = 20};
  PhaseVerdict v = judge_phase(e);
  EXPECT_EQ(v.kind, FailureKind::timing_suspicious);
  e.wall_clock->candidate_event_ms = 18;
  EXPECT_TRUE(judge_phase(e).passed);
}

TEST(GateVerdict, BadSamplesAreAProtocolFailure) {
  PhaseEvidence e = timed_evidence(2.0, 1.0, 40);
  e.candidate_ms[3] = -1;
  EXPECT_EQ(judge_phase(e).kind, FailureKind::protocol);
  e.candidate_ms.pop_back();
  EXPECT_EQ(judge_phase(e).kind, FailureKind::protocol);
}

TEST(GateVerdict, CorrectnessOnlyCheck) {
  PhaseEvidence e;
  e.phase = "check";
  e.worker.completed = true;
  PhaseVerdict v = judge_phase(e);
  EXPECT_TRUE(v.passed);
  GateVerdict g = decide(v, nullptr, false);
  EXPECT_TRUE(g.accept);
  EXPECT_EQ(g.reason, "accepted: correct");
  EXPECT_EQ(g.speedup, 0);
}

}  // namespace
}  // namespace ts::gate
