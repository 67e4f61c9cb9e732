#pragma once
// The payload of a run's entry in DIR/runs.index (results/SCHEMA.md): its index_view as
// CBOR of {spec, error, metrics, curves, provenance, records}, and back.
#include <string>
#include <string_view>

#include "suite/store/run_record.h"

namespace lrb {

std::string encode_view_payload(const RunRecord& view);

// The fields encode_view_payload wrote into `into` (key and status come from the entry's
// header). Throws on a payload that is not such a document: a missing field, a metric that
// is not a number, bytes that are not CBOR. Equal to what json::from_cbor and a copy of
// each field give, without building the whole document first: a report of 100,000 runs
// decodes 100,000 payloads.
void decode_view_payload(std::string_view payload, RunRecord& into);

}  // namespace lrb
