#ifndef CAPPLAN_SERVICE_PLANNER_HELD_OUT_H_
#define CAPPLAN_SERVICE_PLANNER_HELD_OUT_H_

// The load model's report card (issue: "capplan accuracy"): every measured
// row of a baseline predicted through the same path a user's request takes
// (PrepareDeployment, PrepareLoad, DrawCurve), from a catalogue that does not
// hold the baseline, with the efficiency priors refitted without it:
//   BASELINES       nothing of the baseline seen: the prior alone;
//   ALTERNATE_ROWS  the even rows sent as the user's calibration sweep, the
//                   odd rows predicted (and the other way round).
// ROWS (leave one row out, the baseline's own other rows) is accuracy.h's.

#include "absl/status/statusor.h"
#include "capplan/v1/planner.pb.h"
#include "service/catalog/catalog.h"

namespace capplan::service {

// The Accuracy RPC: one baseline (NOT_FOUND when unknown) or every baseline
// with a known card and plain (non-speculative) rows at a concurrency or a
// rate. Summaries per metric for all, per hardware class, per engine and per
// baseline.
absl::StatusOr<v1::AccuracyResponse> Accuracy(const Catalog& catalog,
                                              const v1::AccuracyRequest& request);

// The catalogue's deployment of a baseline as the API states it (what a
// user would send to plan that configuration).
v1::Deployment DeploymentOfBaseline(const v1::Baseline& baseline);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_PLANNER_HELD_OUT_H_
