"""The one sampling module: diagnostics rule set, warnings, seeds."""

import warnings

import arviz as az
import numpy as np
import pytest

from isbetter import ConvergenceWarning
from isbetter.inference.diagnostics import ess_bulk, rhat_rank
from isbetter.inference.sampling import ESS_PER_CHAIN_MIN, diagnose, poor_convergence, warn_if_poor
from isbetter.inference.seeds import sampler_seed
from isbetter.results import MCMCDiagnostics


def _idata(posterior, divergences=0):
    chains, draws = next(iter(posterior.values())).shape[:2]
    diverging = np.zeros((chains, draws), dtype=bool)
    diverging.flat[:divergences] = True
    return az.from_dict(posterior=posterior, sample_stats={"diverging": diverging})


def test_good_chains_converge_and_match_arviz(rng):
    post = {"a": rng.normal(size=(4, 500)), "b": rng.normal(size=(4, 500, 3))}
    d = diagnose(_idata(post), ("a", "b"), backend="pymc")
    assert isinstance(d, MCMCDiagnostics)
    assert d.converged and d.divergences == 0 and (d.chains, d.draws) == (4, 500)
    x = np.concatenate([post["a"][..., None], post["b"]], axis=2)
    assert d.r_hat_max == pytest.approx(rhat_rank(x).max())
    assert d.ess_bulk_min == pytest.approx(ess_bulk(x).min())
    ref = az.ess(_idata(post), method="bulk")
    assert d.ess_bulk_min == pytest.approx(min(float(ref["a"]), float(ref["b"].min())), rel=1e-6)


def test_stuck_chains_divergences_and_few_draws_are_not_converged(rng):
    stuck = rng.normal(size=(4, 500)) + np.arange(4)[:, None]  # chains disagree
    assert not diagnose(_idata({"a": stuck}), ("a",), backend="pymc").converged
    diverging = _idata({"a": rng.normal(size=(2, 400))}, divergences=3)
    d = diagnose(diverging, ("a",), backend="nutpie")
    assert d.divergences == 3 and not d.converged
    few = diagnose(_idata({"a": rng.normal(size=(2, 60))}), ("a",), backend="pymc")
    assert few.ess_bulk_min < ESS_PER_CHAIN_MIN * 2 and not few.converged


def test_warn_if_poor_names_the_model_and_the_fix(rng):
    good = diagnose(_idata({"a": rng.normal(size=(2, 500))}), ("a",), backend="pymc")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_if_poor(good, "test model")
    bad = diagnose(_idata({"a": rng.normal(size=(2, 400))}, divergences=1), ("a",), backend="pymc")
    with pytest.warns(ConvergenceWarning, match="test model's MCMC.*Increase `tune`"):
        warn_if_poor(bad, "test model")
    assert "POOR CONVERGENCE" in bad.line() and "1 divergences" not in good.line()


def test_sampler_seed_comes_from_the_seed_sequence():
    ss = np.random.SeedSequence(42)
    a, b = ss.spawn(2)
    assert sampler_seed(a) == sampler_seed(np.random.SeedSequence(42).spawn(2)[0])
    assert sampler_seed(a) != sampler_seed(b)
    assert 0 <= sampler_seed(a) < 2**32


def test_one_sampling_object_for_the_hierarchical_model_of_scores():
    """Sampling(tune, chains, cores) sets what fit's tune, chains and cores set: same draws."""
    from isbetter import from_arrays
    from isbetter.cv.hierarchical.model import HierarchicalModel
    from isbetter.inference.sampling import Sampling

    g = np.random.default_rng(4)
    a = g.normal(0.8, 0.03, size=(3, 10))
    b = a + g.normal(0.01, 0.02, size=(3, 10))
    scores = from_arrays(a, b, names=("A", "B"), folds=10).paired("A", "B")
    model = HierarchicalModel(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # 2 short chains
        given = model.fit(scores, draws=200, sampling=Sampling(tune=200, chains=2), rng=5)
        loose = model.fit(scores, draws=200, tune=200, chains=2, rng=5)
    np.testing.assert_array_equal(given.delta0, loose.delta0)
    assert given.settings == loose.settings
    assert given.settings["tune"] == 200 and given.settings["chains"] == 2


def test_summary_is_the_three_estimators_and_arviz_with_and_without_ties(rng):
    """diagnostics.summary shares the bulk ranks: the same numbers as rhat_rank, ess_bulk and
    ess_tail, and ArviZ's, for continuous draws (the no-ties path) and rounded ones (ties)."""
    from scipy import stats

    from isbetter.inference.diagnostics import _average_ranks, ess_tail, summary

    smooth = rng.normal(size=(4, 300, 3)).cumsum(axis=1) * 0.1 + rng.normal(size=(4, 300, 3))
    for x in (smooth, np.round(smooth, 1)):
        rows = np.moveaxis(x, 2, 0).reshape(3, -1)
        np.testing.assert_array_equal(_average_ranks(rows), stats.rankdata(rows, axis=1))
        rhat, bulk, tail = summary(x)
        np.testing.assert_array_equal(rhat, rhat_rank(x))
        np.testing.assert_array_equal(bulk, ess_bulk(x))
        np.testing.assert_array_equal(tail, ess_tail(x))
        idata = _idata({"a": x})
        np.testing.assert_allclose(rhat, az.rhat(idata)["a"].to_numpy(), rtol=1e-8)
        np.testing.assert_allclose(bulk, az.ess(idata, method="bulk")["a"].to_numpy(), rtol=1e-8)
        np.testing.assert_allclose(tail, az.ess(idata, method="tail")["a"].to_numpy(), rtol=1e-8)
    assert np.isnan(summary(smooth[:1])[0]).all()  # one chain: no R-hat


def test_average_ranks_are_scipys_on_many_tie_patterns(rng):
    """The tie groups found from the sorted rows: scipy's average ranks, ties anywhere."""
    from scipy import stats

    from isbetter.inference.diagnostics import _average_ranks

    for _ in range(500):
        k, m = rng.integers(1, 5), rng.integers(1, 40)
        rows = rng.integers(0, rng.integers(1, 10), size=(k, m)).astype(float)
        np.testing.assert_array_equal(_average_ranks(rows), stats.rankdata(rows, axis=1))


class _InterruptedSampler:
    """nutpie's background sampler, pressed Ctrl-C while waited for."""

    cancelled = False

    def wait(self):
        raise KeyboardInterrupt

    def cancel(self):
        self.cancelled = True


def test_ctrl_c_while_nutpie_samples_stops_the_fit(monkeypatch):
    """nutpie.sample itself would hand back the draws so far; sample() re-raises instead,
    and stops the sampler."""
    import nutpie

    from isbetter.inference.sampling import sample

    sampler = _InterruptedSampler()
    monkeypatch.setattr(nutpie, "sample", lambda *a, **k: sampler if not k["blocking"] else 0)
    with pytest.raises(KeyboardInterrupt):
        sample(None, draws=10, tune=10, chains=2, cores=1, seed=1, backend="nutpie", compiled=1)
    assert sampler.cancelled


def _sampler_options(monkeypatch, backend, **options):
    """Return the keywords that `sample(..., **options)` hands nutpie's or PyMC's sampler."""
    import nutpie
    import pymc

    from isbetter.inference.sampling import sample

    seen = {}

    class Told(Exception):
        pass

    def record(*args, **kwargs):
        seen.update(kwargs)
        raise Told

    monkeypatch.setattr(nutpie if backend == "nutpie" else pymc, "sample", record)
    with pytest.raises(Told):
        sample(
            None,
            draws=10,
            tune=10,
            chains=2,
            cores=1,
            seed=1,
            backend=backend,
            compiled=1,
            **options,
        )
    return seen


@pytest.mark.parametrize(
    ("mass_matrix", "expected"),
    [
        ("diagonal", {"low_rank_modified_mass_matrix": False}),
        ("low_rank", {"low_rank_modified_mass_matrix": True}),
        (
            "draw_variance",
            {"low_rank_modified_mass_matrix": False, "use_grad_based_mass_matrix": False},
        ),
    ],
)
def test_each_mass_matrix_is_nutpies_setting(monkeypatch, mass_matrix, expected):
    """nutpie's diagonal adaptation uses the gradients unless told; the option is one of its
    diagonal settings alone (the low-rank ones refuse it)."""
    seen = _sampler_options(monkeypatch, "nutpie", mass_matrix=mass_matrix)
    options = ("low_rank_modified_mass_matrix", "use_grad_based_mass_matrix")
    assert {k: seen[k] for k in options if k in seen} == expected


@pytest.mark.parametrize(("backend", "option"), [("nutpie", "maxdepth"), ("pymc", "max_treedepth")])
@pytest.mark.parametrize("max_depth", [None, 12])
def test_max_depth_is_the_samplers_own_setting_only_when_told(
    monkeypatch, backend, option, max_depth
):
    """The tree depth reaches nutpie (``maxdepth``) or PyMC (``max_treedepth``); untold,
    neither sees the option, so every other model keeps its sampler's default."""
    seen = _sampler_options(monkeypatch, backend, max_depth=max_depth)
    assert seen.get(option) == max_depth and (option in seen) == (max_depth is not None)


@pytest.mark.parametrize(("chains", "draws"), [(2, 3), (1, 10), (0, 0)])
def test_chains_cut_short_are_an_interrupt(rng, chains, draws):
    """PyMC's sampler swallows Ctrl-C and returns the chains cut short: not a whole fit."""
    from isbetter.inference.sampling import _check_complete

    _check_complete(_idata({"a": rng.normal(size=(2, 10))}), draws=10, chains=2)  # whole
    cut = _idata({"a": rng.normal(size=(chains, draws))}) if chains else az.InferenceData()
    with pytest.raises(KeyboardInterrupt, match="interrupted"):
        _check_complete(cut, draws=10, chains=2)


class _SlowSampler:
    """nutpie's background sampler, still sampling: wait(timeout) times out."""

    cancelled = False

    def __init__(self):
        self.waits = []

    def wait(self, timeout=None):
        self.waits.append(timeout)
        if timeout is None:
            return "trace"
        import time

        time.sleep(timeout)
        raise TimeoutError

    def cancel(self):
        self.cancelled = True


class _Compiled:
    coords: dict[str, object] = {}


def test_a_fit_in_a_context_with_a_stop_event_ends_when_it_is_set(monkeypatch):
    """Off the main thread no Ctrl-C reaches nutpie: the STOP event of the context does."""
    import contextvars
    import threading
    import time

    import nutpie

    from isbetter.inference import sampling

    sampler = _SlowSampler()
    monkeypatch.setattr(nutpie, "sample", lambda *a, **k: sampler)
    monkeypatch.setattr(sampling, "_check_complete", lambda *a: None)
    monkeypatch.setattr(sampling, "trace_to_idata", lambda raw, coords: raw)
    args = {"draws": 10, "tune": 10, "chains": 2, "cores": 1, "seed": 1, "backend": "nutpie"}
    # no event: waits for good
    assert sampling.sample(None, **args, compiled=_Compiled()) == "trace"
    assert sampler.waits == [None]
    stop = threading.Event()
    context = contextvars.copy_context()
    context.run(sampling.STOP.set, stop)
    threading.Timer(0.3, stop.set).start()
    start = time.monotonic()
    with pytest.raises(sampling.FitStopped):
        context.run(sampling.sample, None, **args, compiled=_Compiled())
    assert time.monotonic() - start < 0.3 + 3 * sampling.STOP_POLL_SECONDS
    assert sampler.cancelled and set(sampler.waits[1:]) == {sampling.STOP_POLL_SECONDS}


def test_convergence_recorded_only_is_this_threads_alone(rng):
    """warn_if_poor is quiet inside the block, in this thread only; the process's warning
    filters are never touched (catch_warnings in threads would race on them)."""
    import threading

    from isbetter.inference.sampling import convergence_recorded_only

    poor = diagnose(_idata({"a": rng.normal(size=(2, 10))}, divergences=1), ("a",), backend="pymc")
    filters = list(warnings.filters)
    heard = []

    def other_thread():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            warn_if_poor(poor, "model")
        heard.append(len(caught))

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with convergence_recorded_only():
            warn_if_poor(poor, "model")
            thread = threading.Thread(target=other_thread)
            thread.start()
            thread.join()
        assert caught == []
        warn_if_poor(poor, "model")
        assert len(caught) == 1
    assert heard == [1]
    assert warnings.filters == filters


@pytest.mark.parametrize(
    "n, words", [(1, "1 divergence (want 0)"), (15, "15 divergences (want 0)")]
)
def test_poor_convergence_counts_divergences_in_words(n, words):
    d = MCMCDiagnostics(
        r_hat_max=1.0, ess_bulk_min=900.0, ess_tail_min=900.0, divergences=n, chains=4,
        draws=1000, variables=("x",), backend="nutpie", converged=False,
    )  # fmt: skip
    assert poor_convergence(d).endswith(words)
