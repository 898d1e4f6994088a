"""The bench chart's axis: a ceiling above every value, whatever a saved report holds."""

from __future__ import annotations

import pytest

from ecoready.report.svg_chart import Line, line_chart, nice_ceiling


@pytest.mark.parametrize(
    ("value", "ceiling"),
    [(0.0, 1.0), (-3.0, 1.0), (7.0, 10.0), (1_565.0, 2_000.0), (47_502.3, 50_000.0), (5e-324, 1.0)],
)
def test_the_axis_ceiling(value: float, ceiling: float) -> None:
    assert nice_ceiling(value) == ceiling


def test_a_subnormal_tps_draws_a_chart() -> None:
    # 5e-324's power of ten underflows to 0: the axis once had a height of nothing
    svg = line_chart("m: w, uniform", [Line("amd64", ((1, 5e-324),), "#000")])
    assert svg.startswith("<svg") and "nan" not in svg
