"""parse_when: the accepted forms, table-tested, and properties over any moment."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.errors import MemrepoError
from bot.memfs.history import EXIT_BAD_DATE, BadDateError, parse_when, parse_when_bound

UTC_2 = timezone(timedelta(hours=2))


@pytest.mark.parametrize(("text", "expected", "date_only"), [
    ("2024-05-06", datetime(2024, 5, 6, tzinfo=UTC), True),
    (" 2024-05-06 ", datetime(2024, 5, 6, tzinfo=UTC), True),
    ("2024-05-06T14:30", datetime(2024, 5, 6, 14, 30, tzinfo=UTC), False),
    ("2024-05-06 14:30", datetime(2024, 5, 6, 14, 30, tzinfo=UTC), False),
    ("2024-05-06t14:30:15", datetime(2024, 5, 6, 14, 30, 15, tzinfo=UTC), False),
    ("2024-05-06T14:30:15.5", datetime(2024, 5, 6, 14, 30, 15, 500000, tzinfo=UTC), False),
    ("2024-05-06T14:30:15,123456", datetime(2024, 5, 6, 14, 30, 15, 123456, tzinfo=UTC), False),
    ("2024-05-06T14:30:15Z", datetime(2024, 5, 6, 14, 30, 15, tzinfo=UTC), False),
    ("2024-05-06T14:30z", datetime(2024, 5, 6, 14, 30, tzinfo=UTC), False),
    ("2024-05-06T14:30:15+02:00", datetime(2024, 5, 6, 14, 30, 15, tzinfo=UTC_2), False),
    ("2024-05-06T14:30+0200", datetime(2024, 5, 6, 12, 30, tzinfo=UTC), False),
    ("2024-05-06T14:30+02", datetime(2024, 5, 6, 12, 30, tzinfo=UTC), False),
    ("2024-05-06T14:30-05:30", datetime(2024, 5, 6, 20, 0, tzinfo=UTC), False),
    ("2024-02-29", datetime(2024, 2, 29, tzinfo=UTC), True),
    ("@0", datetime(1970, 1, 1, tzinfo=UTC), False),
    ("@1714998615", datetime(2024, 5, 6, 12, 30, 15, tzinfo=UTC), False),
])
def test_accepted_forms(text: str, expected: datetime, date_only: bool) -> None:
    moment, alone = parse_when_bound(text)
    assert moment == expected and moment.tzinfo is not None
    assert alone is date_only
    assert parse_when(text) == expected


@pytest.mark.parametrize("text", [
    "", "   ", "yesterday", "now", "05/06/2024", "06.05.2024", "2024-5-6", "2024/05/06", "20240506",
    "2024-05-06T14", "2024-05-06T1430", "2024-05-06T14:30 CET", "2024-05-06T14:30:15.1234567",
    "2024-02-30", "2023-02-29", "2024-13-01", "2024-00-10", "2024-05-06T24:00", "2024-05-06T23:60",
    "2024-05-06T23:59:60", "2024-05-06T10:00+24:00", "2024-05-06T10:00+01:60", "2024-W19-1", "2024-127",
    "2024-05-06T10:00:00ZZ", "@", "@1.5", "@99999999999999", "0000-01-01", "２０２４-05-06",
])
def test_refused_forms_name_the_accepted_ones(text: str) -> None:
    with pytest.raises(BadDateError) as caught:
        parse_when(text)
    message = str(caught.value)
    assert "\n" not in message
    assert repr(text) in message and "YYYY-MM-DD" in message and "@SECONDS" in message
    assert caught.value.details["exit_code"] == EXIT_BAD_DATE
    assert isinstance(caught.value, MemrepoError)


def test_not_text_is_refused() -> None:
    with pytest.raises(BadDateError):
        parse_when(None)  # type: ignore[arg-type]


moments = st.datetimes(min_value=datetime(1000, 1, 1), max_value=datetime(9998, 12, 31),
                       timezones=st.sampled_from([UTC, UTC_2, timezone(timedelta(hours=-9, minutes=-30)),
                                                  timezone(timedelta(hours=14))]))


@given(moments)
def test_any_isoformat_reads_back_as_the_same_moment(moment: datetime) -> None:
    for text in (moment.isoformat(), moment.isoformat(sep=" "), moment.isoformat(timespec="microseconds")):
        assert parse_when(text) == moment
    if moment.utcoffset() == timedelta(0):
        assert parse_when(moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")) == moment


@given(st.datetimes(min_value=datetime(1000, 1, 1), max_value=datetime(9998, 12, 31)))
def test_a_time_without_a_zone_is_utc_and_a_date_alone_is_its_first_moment(naive: datetime) -> None:
    assert parse_when(naive.isoformat()) == naive.replace(tzinfo=UTC)
    day, alone = parse_when_bound(naive.date().isoformat())
    assert alone and day == datetime(naive.year, naive.month, naive.day, tzinfo=UTC)


@given(st.text(max_size=40))
def test_any_text_is_a_moment_or_a_clear_error(text: str) -> None:
    try:
        moment = parse_when(text)
    except BadDateError as exc:
        assert "YYYY-MM-DD" in str(exc)
    else:
        assert moment.tzinfo is not None and moment.utcoffset() is not None
