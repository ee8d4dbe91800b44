"""Exact expectations for linear-Gaussian runs: moment propagation instead of Monte Carlo (issue #8).

On a quadratic problem with additive Gaussian noise every round of FedAvg-type methods is an affine
map of the state and the noise, given the clients drawn and their delays. The mean and the second
moment of the (augmented) state then propagate exactly, and every quadratic measure's expectation
follows: no Monte-Carlo error, a cost independent of the number of replicas.

Faithful to the implementation: nothing here re-derives an algorithm. The affine maps are READ OFF
the algorithm's own seams by probing: ``client_update`` runs on probe start points (the origin and
the unit vectors, laid out as "replicas") with a probe noise stream (zero draws, then unit draws),
``aggregate`` and ``server_step`` on unit inputs, ``problem.measures`` on points that determine a
quadratic form, the delay schedule's ``sample`` on the exact quadrature of its uniform draws. Every
read-off map is then checked on random inputs; a piece that is not affine (a projection that binds,
tanh, clipping, a non-Gaussian draw) raises ``NotExact`` with the reason, and the engine falls back
to Monte Carlo (mode ``auto``) or refuses (mode ``exact``). So a bug in an algorithm's seams shows in
exact mode too. What stays here is the round's skeleton (who is sampled, which stale model a job
starts from, how duplicates count): its expectations come from the multiplicity moments of the
sampling scheme and the delay schedule's distribution, exactly.

The augmented state of the FedAvg family is v = (w^t, w^{t-1}, ..., w^{t-lam}, server state, 1); a
round maps it to v' = M v + E D with the aggregated direction D = w sum_i n_i (J_{i,d_i} v + G_i z_i),
n_i the multiplicity of client i, d_i its delay, z_i its standard-normal draws. E[v'] and E[v' v'^T]
follow in closed form from E[n_i], E[n_i^2], E[n_i n_k] and the delay probabilities.

Algorithms without those seams (SimFBO, FESS-GDA, StR-FedAvg, FedBiO) are exact where their whole
``round`` is affine-Gaussian given the clients drawn: ``RoundModel`` probes the round itself on the
flattened state, under every outcome of its client sampling (the 'sampling' stream scripted to the
draws that pick each outcome), and averages E S' = sum_s p_s (F_s S F_s^T + N_s) over the outcomes
(enumerated, up to OUTCOME_CAP) or, for rounds additive over the clients drawn (F_s = sum_i n_i D_i,
checked on random outcomes), through the multiplicities' exact moments E n_i n_k. Any other uniform
draw (random local-step counts, random delays inside ``round``) raises NotExact.

Multiplicative noise (``multiplicative``): local steps whose oracle picks rows at random (P4's
least-squares mini-batches) are random affine maps over finitely many outcomes; FedAvgModel reads
every outcome's one-step map off the code, propagates E[Phi S Phi^T] over the K steps, and adds the
jobs' random part to the round (up to MAX_OUTCOMES outcomes a step). Stochastic Hessians
(``gaussian_steps``: A_xi = A + sum_k xi_k B_k, standard-normal xi) make a step bilinear,
x' = T x + c + sum_q z_q (F_q x + g_q), read off the code and propagated the same way. Both with
delays (each job's random part at its delayed start) and server state.

A run in exact mode produces the usual Trace with ONE "replica" (the expectations), zero spread,
``info["exact"] = True`` (``Trace.exact``). Other algorithm families join by exposing the same seams
(client_update -> aggregate -> server_step) and registering a model with ``exact_model``.

Modules: ``probing`` (probe streams, NotExact), ``seams`` (client_update, aggregate, server_step
and the measures, read off as affine maps and quadratic forms), ``local_steps`` (a K-step client
job composed from its one-step map by repeated squaring, checked against the K-step code), ``delays`` (multiplicity moments,
delay tables), ``operators`` (round operators on the second moment), ``fedavg`` (FedAvgModel),
``diagonal`` (shared eigenbasis), ``multiplicative`` and ``gaussian_steps`` (random local steps),
``round_model`` (RoundModel), ``bilinear`` and ``bilinear_round`` (whole rounds bilinear in state and
noise: FedBiO's and FedBiOAcc's Jacobian/Hessian noise), ``neumann`` (FedBiO-Local's round stage by stage
through its Neumann seams: Q sampled Hessians a round), ``rates`` (exact linear rates as spectral radii
of the moment map), ``run`` (the model registry and run_exact).
"""

from __future__ import annotations

from .bilinear import BilinearMap, read_bilinear
from .bilinear_round import BilinearOperator, BilinearRoundModel, whole_round_model
from .delays import (
    SlotMoments,
    _slot_histograms,  # noqa: F401  (importable as before the split)
    _step_quadrature,  # noqa: F401  (importable as before the split)
    delay_table,
    schedule_delay_table,
    slot_moments,
)
from .diagonal import DiagonalFedAvgModel
from .fedavg import (
    SCHEDULE_SLACK,
    FedAvgModel,
)
from .gaussian_steps import GaussianSteps, gaussian_steps
from .local_steps import client_maps, compose_power, composed_client_maps
from .multiplicative import MAX_OUTCOMES, MultiplicativeOperator, RandomJobs, SampledSteps, sampled_steps
from .neumann import NeumannModel
from .operators import (
    DENSE_MAX,
    MIXTURE_DENSE_MAX,
    JobsOperator,
    MixtureOperator,
    RoundOperator,
    _outer_map,  # noqa: F401  (importable as before the split)
)
from .probing import (
    AFFINE_RTOL,
    DIVERGENCE_THRESHOLD,
    NotExact,
    ProbeStream,
    ProbeStreams,
    _close,  # noqa: F401  (importable as before the split)
)
from .rates import ExactRates, config_log_rate, exact_rates
from .round_model import (
    BOOKKEEPING_WATCH,
    OUTCOME_CAP,
    PROBE_ROWS,
    SAMPLING_CHECKS,
    RoundModel,
    _KnownRound,  # noqa: F401  (importable as before the split)
    _NotAdditive,  # noqa: F401  (importable as before the split)
    _same,  # noqa: F401  (importable as before the split)
    _Sampling,  # noqa: F401  (importable as before the split)
    _Seen,  # noqa: F401  (importable as before the split)
)
from .run import (
    MODELS,
    _augmented_measures,  # noqa: F401  (importable as before the split)
    _measure_forms,  # noqa: F401  (importable as before the split)
    _run_exact,  # noqa: F401  (importable as before the split)
    exact_model,
    fedavg_model,
    model_for,
    run_exact,
)
from .seams import (
    ClientMaps,
    QuadraticMeasure,
    ServerMap,
    _server_shape,  # noqa: F401  (importable as before the split)
    probe_aggregate,
    probe_client_update,
    probe_measures,
    probe_server_step,
)

__all__ = [
    "AFFINE_RTOL",
    "BOOKKEEPING_WATCH",
    "BilinearMap",
    "BilinearOperator",
    "BilinearRoundModel",
    "DENSE_MAX",
    "DIVERGENCE_THRESHOLD",
    "MAX_OUTCOMES",
    "MIXTURE_DENSE_MAX",
    "MODELS",
    "OUTCOME_CAP",
    "PROBE_ROWS",
    "SAMPLING_CHECKS",
    "SCHEDULE_SLACK",
    "ClientMaps",
    "DiagonalFedAvgModel",
    "ExactRates",
    "FedAvgModel",
    "GaussianSteps",
    "JobsOperator",
    "MixtureOperator",
    "MultiplicativeOperator",
    "NeumannModel",
    "NotExact",
    "ProbeStream",
    "ProbeStreams",
    "QuadraticMeasure",
    "RandomJobs",
    "RoundModel",
    "RoundOperator",
    "SampledSteps",
    "ServerMap",
    "SlotMoments",
    "client_maps",
    "compose_power",
    "composed_client_maps",
    "config_log_rate",
    "delay_table",
    "exact_model",
    "exact_rates",
    "fedavg_model",
    "gaussian_steps",
    "model_for",
    "probe_aggregate",
    "probe_client_update",
    "probe_measures",
    "probe_server_step",
    "read_bilinear",
    "run_exact",
    "sampled_steps",
    "schedule_delay_table",
    "slot_moments",
    "whole_round_model",
]
