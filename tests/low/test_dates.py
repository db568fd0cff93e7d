"""The one date parser (bot.dates): the accepted forms and the refused ones as tables, the
since/until rule, and properties that every accepted form gives the same instant through
every entry point (`at`/`compile --at`, `log --since/--until`, `search --since/--until`, a
transcript row's times)."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot import dates
from bot.commands.log import time_window
from bot.dates import EXIT_BAD_DATE, BadDateError, parse_range, parse_when, parse_when_bound
from bot.errors import MemrepoError
from bot.transcript.model import canonical_time, format_time, parse_time, parse_time_bound, time_range, to_micros

UTC_2 = timezone(timedelta(hours=2))
DAY = 86_400_000_000  # microseconds


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


@pytest.mark.parametrize(("text", "expected", "day_alone"), [
    ("2024-05-06", utc(2024, 5, 6), True),
    (" 2024-05-06 ", utc(2024, 5, 6), True),
    ("20240506", utc(2024, 5, 6), True),  # the basic format
    ("2024-W19-1", utc(2024, 5, 6), True),  # a week date: Monday of week 19
    ("2024W197", utc(2024, 5, 12), True),
    ("2024-02-29", utc(2024, 2, 29), True),
    ("2024-05-06T14", utc(2024, 5, 6, 14), False),
    ("2024-05-06T14:30", utc(2024, 5, 6, 14, 30), False),
    ("2024-05-06 14:30", utc(2024, 5, 6, 14, 30), False),
    ("2024-05-06t14:30:15", utc(2024, 5, 6, 14, 30, 15), False),
    ("2024-05-06T1430", utc(2024, 5, 6, 14, 30), False),
    ("20240506T143015", utc(2024, 5, 6, 14, 30, 15), False),
    ("20240506T14:30", utc(2024, 5, 6, 14, 30), False),
    ("2024-05-06T14:30:15.5", utc(2024, 5, 6, 14, 30, 15, 500000), False),
    ("2024-05-06T14:30:15,123456", utc(2024, 5, 6, 14, 30, 15, 123456), False),
    ("2024-05-06T14:30:15.1234567", utc(2024, 5, 6, 14, 30, 15, 123456), False),  # past microseconds: dropped
    ("2024-05-06T143015.25", utc(2024, 5, 6, 14, 30, 15, 250000), False),
    ("2024-05-06T14:30:15Z", utc(2024, 5, 6, 14, 30, 15), False),
    ("2024-05-06T14:30z", utc(2024, 5, 6, 14, 30), False),
    ("2024-05-06T14Z", utc(2024, 5, 6, 14), False),
    ("2024-05-06T14:30:15+02:00", datetime(2024, 5, 6, 14, 30, 15, tzinfo=UTC_2), False),
    ("2024-05-06T14:30+0200", utc(2024, 5, 6, 12, 30), False),
    ("2024-05-06T14:30+02", utc(2024, 5, 6, 12, 30), False),
    ("2024-05-06T14:30 +02:00", utc(2024, 5, 6, 12, 30), False),
    ("2024-05-06T14:30-05:30", utc(2024, 5, 6, 20, 0), False),
    ("2024-05-06T14:30-00:00", utc(2024, 5, 6, 14, 30), False),
    ("2024-05-06T14:30:00+05:21:10", utc(2024, 5, 6, 9, 8, 50), False),
    ("2024-05-06T00:30+01:00", utc(2024, 5, 5, 23, 30), False),  # the day before, in UTC
    ("@0", utc(1970, 1, 1), False),
    ("@1714998615", utc(2024, 5, 6, 12, 30, 15), False),
    ("@-86400", utc(1969, 12, 31), False),
])
def test_accepted_forms(text: str, expected: datetime, day_alone: bool) -> None:
    moment, alone = parse_when_bound(text)
    assert moment == expected and moment.tzinfo is UTC
    assert alone is day_alone
    assert parse_when(text) == expected


@pytest.mark.parametrize("text", [
    "", "   ", "yesterday", "now", "last tuesday", "May 1", "05/06/2024", "06.05.2024", "2024-5-6", "2024/05/06",
    "2024-05", "2024", "2024-127", "2024127", "2024-W19", "2024W19", "2024-W191", "2024-w19-1",
    "2024-05-06T", "2024-05-06T14.5", "2024-05-06T14:30.5", "2024-05-06T1430:15", "2024-05-06T14:3015",
    "2024-05-06x14:30", "2024-05-06_14:30", "2024-05-06T14:30 CET", "2024-05-06T14:30:15.",
    "2024-02-30", "2023-02-29", "2024-13-01", "2024-00-10", "2024-W54-1", "2024-W19-8", "0000-01-01",
    "2024-05-06T24:00", "2024-05-06T23:60", "2024-05-06T23:59:60", "2024-05-06T25:00",
    "2024-05-06T10:00+24:00", "2024-05-06T10:00+01:60", "2024-05-06T10:00+01:00:60", "2024-05-06T10:00+01:00:30.5",
    "2024-05-06Z", "2024-05-06+02:00", "2024-05-06T10:00:00ZZ", "2024-05-06T10:00Z+01:00",
    "9999-12-31T23:59-01:00", "0001-01-01T00:00+01:00",
    "@", "@1.5", "@99999999999999", "@999999999999", "２０２４-05-06",
])
def test_refused_forms_name_the_accepted_ones(text: str) -> None:
    with pytest.raises(BadDateError) as caught:
        parse_when(text)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"cannot read {text!r} as a date")
    assert "YYYY-MM-DD" in message and "@SECONDS" in message
    assert caught.value.details["exit_code"] == EXIT_BAD_DATE
    assert isinstance(caught.value, MemrepoError)


@pytest.mark.parametrize(("text", "reason"), [
    ("2024-02-30", "day is out of range for month"),
    ("2024-05-06T10:00+01:60", "the zone +01:60 is not an offset from UTC"),
    ("@999999999999", "out of range"),
])
def test_a_form_that_names_no_moment_says_why(text: str, reason: str) -> None:
    with pytest.raises(BadDateError, match=re.escape(f"as a date ({reason})")):
        parse_when(text)


@pytest.mark.parametrize("value", [None, 17, 1.5, b"2024-05-06", date(2024, 5, 6)])
def test_not_text_is_refused(value: object) -> None:
    with pytest.raises(BadDateError):
        parse_when(value)


def test_a_datetime_passes_through_in_utc() -> None:
    assert parse_when_bound(datetime(2024, 5, 6, 14, 30)) == (utc(2024, 5, 6, 14, 30), False)
    moment = parse_when(datetime(2024, 5, 6, 14, 30, tzinfo=UTC_2))
    assert moment == utc(2024, 5, 6, 12, 30) and moment.tzinfo is UTC
    with pytest.raises(BadDateError, match="out of range"):
        parse_when(datetime(1, 1, 1, tzinfo=UTC_2))


def test_the_field_is_named_in_the_details() -> None:
    with pytest.raises(BadDateError) as caught:
        parse_time("soon", what="captured_at")
    assert caught.value.details["what"] == "captured_at" and caught.value.details["value"] == "soon"
    with pytest.raises(BadDateError) as caught:
        time_range(None, "later")
    assert caught.value.details["what"] == "until"


@pytest.mark.parametrize(("since", "until", "expected"), [
    (None, None, (None, None)),
    ("2024-05-06", None, (utc(2024, 5, 6), None)),
    (None, "2024-05-06", (None, utc(2024, 5, 7))),  # a day alone: through its end
    (None, "2024-05-06T14:30Z", (None, utc(2024, 5, 6, 14, 30, 0, 1))),  # a moment: itself included
    (None, "@1714998615", (None, utc(2024, 5, 6, 12, 30, 15, 1))),
    ("2024-05-06T14:30+02:00", "20240507", (utc(2024, 5, 6, 12, 30), utc(2024, 5, 8))),
    ("2024-05-07", "2024-05-06", (utc(2024, 5, 7), utc(2024, 5, 7))),  # empty: the caller says so
    (None, "9999-12-31", (None, datetime.max.replace(tzinfo=UTC))),
])
def test_parse_range(since: str | None, until: str | None, expected: tuple) -> None:
    assert parse_range(since, until) == expected


# ------------------------------------------------------------------------------ properties
moments = st.datetimes(min_value=datetime(1000, 1, 1), max_value=datetime(9998, 12, 31),
                       timezones=st.sampled_from([UTC, UTC_2, timezone(timedelta(hours=-9, minutes=-30)),
                                                  timezone(timedelta(hours=14)), timezone(timedelta(hours=-23)),
                                                  timezone(timedelta(hours=5, minutes=21, seconds=10))]))


def _offset(moment: datetime, colon: bool) -> str:
    text = moment.strftime("%z")  # +HHMM[SS]
    if colon:
        text = ":".join([text[:3], text[3:5], *([text[5:7]] if len(text) > 5 else [])])
    return text


def iso_forms(moment: datetime) -> list[str]:
    """The ways ISO 8601 writes this moment that memrepo reads."""
    extended = moment.strftime("%Y-%m-%dT%H:%M:%S.%f")
    basic = moment.strftime("%Y%m%dT%H%M%S.%f")
    week = "{}-W{:02d}-{}T".format(*moment.isocalendar()) + moment.strftime("%H:%M:%S.%f")
    forms = [moment.isoformat(), moment.isoformat(sep=" "), moment.isoformat(timespec="microseconds"),
             extended + _offset(moment, True), extended.replace("T", " ") + _offset(moment, False),
             basic + _offset(moment, False), week + _offset(moment, True), extended.replace(".", ",") +
             _offset(moment, True)]
    if moment.utcoffset() == timedelta(0):
        forms += [extended + "Z", basic + "z", extended]  # no zone: UTC
    if moment.microsecond == 0:
        forms.append(moment.strftime("%Y-%m-%dT%H:%M:%S") + _offset(moment, True))
        if moment.second == 0:
            forms.append(moment.strftime("%Y-%m-%dT%H:%M") + _offset(moment, False))
    return forms


@given(moments)
def test_every_iso_form_is_the_same_instant_through_every_entry_point(moment: datetime) -> None:
    micros = to_micros(moment)
    for text in iso_forms(moment):
        assert parse_when(text) == moment, text
        assert parse_when_bound(text) == (moment, False), text
        assert parse_time(text) == moment and parse_time_bound(text)[0] == moment, text
        assert canonical_time(text, "time") == format_time(moment), text
        assert time_range(text, None) == (micros, None), text
        assert time_range(None, text) == (None, micros + 1), text  # until includes the moment
        if abs(micros) < 2**31 * 10**6:  # log reads bounds as float seconds: exact to the microsecond here
            assert time_window(text, None) == (-(-micros // 10**6), None), text  # the first whole second in it
            assert time_window(None, text) == (None, micros // 10**6), text  # the last whole second in it


@given(st.integers(min_value=-62_135_596_800, max_value=253_402_300_799))  # 0001-01-01 to 9999-12-31
def test_git_seconds_read_back(seconds: int) -> None:
    moment = parse_when(f"@{seconds}")
    assert to_micros(moment) == seconds * 10**6
    assert time_window(f"@{seconds}", f"@{seconds}") == (seconds, seconds)


@given(st.datetimes(min_value=datetime(1000, 1, 1), max_value=datetime(9998, 12, 31)))
def test_no_zone_is_utc_and_a_day_alone_covers_the_day(naive: datetime) -> None:
    assert parse_when(naive.isoformat()) == naive.replace(tzinfo=UTC)
    day = naive.date()
    first = utc(day.year, day.month, day.day)
    for text in (day.isoformat(), day.strftime("%Y%m%d"), "{}-W{:02d}-{}".format(*day.isocalendar())):
        assert parse_when_bound(text) == (first, True), text
        lo, hi = time_range(text, text)  # search: [first moment, next day)
        assert (lo, hi - lo) == (to_micros(first), DAY), text
        start, end = time_window(text, text)  # log: whole seconds, both ends included
        assert (start, end - start) == (to_micros(first) // 10**6, 86_399), text


@given(st.text(max_size=40))
def test_any_text_is_a_moment_or_one_clear_error(text: str) -> None:
    try:
        moment = parse_when(text)
    except BadDateError as exc:
        assert str(exc).startswith("cannot read") and "YYYY-MM-DD" in str(exc) and "\n" not in str(exc)
    else:
        assert moment.tzinfo is UTC


@given(st.from_regex(dates._FORM, fullmatch=True))
def test_any_text_of_the_grammar_is_a_moment_or_says_why(text: str) -> None:
    try:
        moment, _ = parse_when_bound(text)
    except BadDateError as exc:
        assert "(" in str(exc)  # the form was right, the day, hour or zone does not exist: the reason is given
    else:
        assert moment.tzinfo is UTC
