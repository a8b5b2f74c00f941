"""The driver's report is read only as far as an honest driver's report goes."""

from __future__ import annotations

import json

import pytest

from bridge.functions.driver_report import ReportError, TooManyRequests, read_report


def report(**fields: object) -> str:
    return json.dumps({"pending": False, "requests": [], **fields})


def test_an_honest_report_reads_as_written() -> None:
    text = report(
        requests=[[1, '{"action":"x"}', None], [2, None, "not JSON"]],
        dropped=3,
        done=True,
        result='{"a": [1, 2]}',
        failure={"code": "c", "message": "m"},
    )
    assert read_report(text, 2) == json.loads(text)
    assert read_report(' {"pending" : true } ', 0) == {"pending": True}


def test_a_forged_flood_is_refused_at_the_first_request_past_the_bound() -> None:
    flood = report(requests=[[1, None, "x"]] * 100_000)
    with pytest.raises(TooManyRequests, match="more than 33 items"):
        read_report(flood, 33)
    # The error names where reading stopped: right after the 33 requests, not at the end.
    with pytest.raises(TooManyRequests) as stopped:
        read_report(flood, 33)
    assert int(str(stopped.value).rsplit(" ", 1)[-1]) < 1_000


@pytest.mark.parametrize(
    "text",
    [
        report(result=[[0] * 10] * 10),  # containers where the driver writes a string
        report(dropped={"n": 1}),
        report(failure={"code": "c", "message": "m", "extra": [1]}),
        report(requests=[[1, None, None, 4]]),  # a request of four fields
        report(requests=[{"id": 1}]),
        report(junk=1),
        '{"pending": false, "pending": false}',
        '{"pending": false} []',
        '{"pending": false',
        '{"pending": fals}',
        "",
    ],
)
def test_anything_but_the_drivers_shape_is_refused(text: str) -> None:
    with pytest.raises(ReportError):
        read_report(text, 33)
