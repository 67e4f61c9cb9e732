#pragma once
// What every run of a job records about where it ran: host, rank, threads, versions, the
// BLAS and its core, Slurm's variables; and the matrix-product peak its utilisation is
// measured against.
#include <nlohmann/json.hpp>

#include "suite/config/shard.h"
#include "suite/config/sweep_spec.h"
#include "suite/mpi/mpi_session.h"
#include "suite/run/runner.h"

namespace lrb {

nlohmann::json job_provenance(const MpiSession& mpi, const SweepSpec& spec, int threads, const Shard& shard);

// The peak a run's utilisation is measured against: once per host, build, device and thread
// count, cached (suite/run/matmul_peak.h); the ranks of a machine take turns, before any of
// them trains. Sets ctx.peak_flops_per_s and the provenance's matmul_peak.
void set_matmul_peak(const SweepSpec& spec, RunContext& ctx);

}  // namespace lrb
