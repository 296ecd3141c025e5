"""The lean conversion of nutpie's raw trace equals nutpie's own, draw for draw."""

from __future__ import annotations

import numpy as np
import pytest

from isbetter.inference.nutpie_trace import trace_to_idata

nutpie = pytest.importorskip("nutpie")


def test_raw_trace_converts_to_nutpies_own_inference_data() -> None:
    from isbetter.items.hierarchical import density

    buffer = density.model_buffer(
        np.array([100.0, 120.0, 90.0]),
        np.array([30.0, 25.0, 20.0]),
        np.array([20.0, 10.0, 12.0]),
        scales=(1.0, 1.0, 1.0, 1.0),
    )
    compiled = density.compiled_model(buffer)
    settings = {"draws": 60, "tune": 40, "chains": 2, "cores": 1, "seed": 3}
    own = nutpie.sample(compiled, progress_bar=False, **settings)
    raw = nutpie.sample(compiled, progress_bar=False, return_raw_trace=True, **settings)
    lean = trace_to_idata(raw, compiled.coords)
    assert set(lean.groups()) == {"posterior", "sample_stats"}
    for group in ("posterior", "sample_stats"):
        mine, theirs = lean[group], own[group]
        assert set(mine.data_vars) == set(theirs.data_vars)
        for name in theirs.data_vars:
            assert mine[name].dims == theirs[name].dims, name
            assert mine[name].dtype == theirs[name].dtype, name
            np.testing.assert_array_equal(mine[name].to_numpy(), theirs[name].to_numpy())
        for dim in mine.dims:
            np.testing.assert_array_equal(mine[dim].to_numpy(), theirs[dim].to_numpy())
