"""Reading the dates and times people and files give memrepo: `memrepo at DATE`, `compile
--at`, `log --since/--until`, `search --since/--until`, a transcript row's times. One parser,
so every command reads the same text as the same moment.

Pure. Accepted (ISO 8601; a space may stand for the T, and the text may be padded):

    2024-05-06, 20240506, 2024-W19-1, 2024W191   a day: its first moment, 00:00:00 UTC
    ...T14, ...T14:30, ...T1430                  a time without a zone is UTC (the same
    ...T14:30:15[.123456], ...T143015[,5]        answer on every machine); digits past the
                                                 microsecond are dropped
    ...Z, ...+02:00, ...-0500, ...+02            with a zone (an offset from UTC, less than
                                                 a day; seconds allowed, as in +05:21:10)
    @1714998615                                  seconds since the Unix epoch, as git writes them

A `datetime` passes through (naive means UTC). Anything else (05/06/2024, 2024-5-6,
"yesterday", a zone name such as CET, a day or an offset that does not exist) is refused with
one message naming these forms: a guess could put memory, or a search, in the wrong day.

Every moment comes back in UTC. `parse_when_bound` also says whether the text was a day
alone, and `parse_range` is the one rule for a since/until pair: [since, until), where a day
alone as `until` ends with that day and a moment as `until` includes it.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta, timezone

from bot import texts
from bot.errors import MemrepoError

# Dates and ranges (bot/dates.py), for every --since, --until and `at`.
SEARCH_EMPTY_RANGE = "since {since} is not before until {until}; nothing can match"
HISTORY_DATE_OUT_OF_RANGE = "out of range"

EXIT_BAD_DATE = 3
RESOLUTION = timedelta(microseconds=1)

_FORM = re.compile(
    r"(?:(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})"
    r"|(?P<byear>\d{4})(?P<bmonth>\d{2})(?P<bday>\d{2})"
    r"|(?P<wyear>\d{4})-W(?P<week>\d{2})-(?P<weekday>\d)"
    r"|(?P<bwyear>\d{4})W(?P<bweek>\d{2})(?P<bweekday>\d))"
    r"(?:[Tt ](?P<hour>\d{2})"
    r"(?:(?P<colon>:?)(?P<minute>\d{2})(?:(?P=colon)(?P<second>\d{2})(?:[.,](?P<fraction>\d+))?)?)?"
    r" ?(?P<zone>[Zz]|(?P<sign>[+-])(?P<zh>\d{2})(?::?(?P<zm>\d{2})(?::?(?P<zs>\d{2}))?)?)?)?",
    re.ASCII,
)
_EPOCH = re.compile(r"@(?P<seconds>-?\d{1,12})", re.ASCII)


class BadDateError(MemrepoError):
    """A date that is not one of the accepted forms (exit code 3). `what` names the field or
    option it was given for, in `details`."""

    def __init__(self, value: object, reason: str | None = None, *, what: str | None = None) -> None:
        shown = value if isinstance(value, str) else repr(value)
        text = f"cannot read {shown!r} as a date; use {texts.HISTORY_DATE_FORMS}"
        if reason:
            text = f"cannot read {shown!r} as a date ({reason}); use {texts.HISTORY_DATE_FORMS}"
        super().__init__(text, exit_code=EXIT_BAD_DATE, value=value, what=what)


def _day(match: re.Match[str]) -> date:
    if match.group("year"):
        return date(int(match.group("year")), int(match.group("month")), int(match.group("day")))
    if match.group("byear"):
        return date(int(match.group("byear")), int(match.group("bmonth")), int(match.group("bday")))
    if match.group("wyear"):
        return date.fromisocalendar(int(match.group("wyear")), int(match.group("week")), int(match.group("weekday")))
    return date.fromisocalendar(int(match.group("bwyear")), int(match.group("bweek")), int(match.group("bweekday")))


def _zone(match: re.Match[str]) -> timezone:
    if match.group("sign") is None:
        return UTC  # Z, or no zone at all
    hours, minutes, seconds = (int(match.group(g) or 0) for g in ("zh", "zm", "zs"))
    if hours > 23 or minutes > 59 or seconds > 59:
        raise ValueError("the zone {zone} is not an offset from UTC".format(zone=match.group("zone")))
    sign = -1 if match.group("sign") == "-" else 1
    return timezone(sign * timedelta(hours=hours, minutes=minutes, seconds=seconds))


def parse_when_bound(text: object, *, what: str | None = None) -> tuple[datetime, bool]:
    """(the moment in UTC, whether the text was a day alone): an `until` uses the second part
    to cover the whole day. BadDateError (naming `what`, if given) for anything else."""
    if isinstance(text, datetime):
        try:
            return (text.astimezone(UTC) if text.tzinfo else text.replace(tzinfo=UTC)), False
        except (OverflowError, ValueError):
            raise BadDateError(text, HISTORY_DATE_OUT_OF_RANGE, what=what) from None
    if not isinstance(text, str):
        raise BadDateError(text, what=what)
    raw = text.strip()
    epoch = _EPOCH.fullmatch(raw)
    if epoch:
        try:
            return datetime.fromtimestamp(int(epoch.group("seconds")), UTC), False
        except (OverflowError, OSError, ValueError):
            raise BadDateError(text, HISTORY_DATE_OUT_OF_RANGE, what=what) from None
    match = _FORM.fullmatch(raw)
    if match is None:
        raise BadDateError(text, what=what)
    try:
        day = _day(match)
        if match.group("hour") is None:
            return datetime(day.year, day.month, day.day, tzinfo=UTC), True
        fraction = (match.group("fraction") or "")[:6].ljust(6, "0")
        moment = datetime(day.year, day.month, day.day, int(match.group("hour")), int(match.group("minute") or 0),
                          int(match.group("second") or 0), int(fraction), tzinfo=_zone(match))
        return moment.astimezone(UTC), False
    except (ValueError, OverflowError) as exc:  # a day, hour or zone that does not exist; beyond year 9999 in UTC
        raise BadDateError(text, str(exc), what=what) from None


def parse_when(text: object, *, what: str | None = None) -> datetime:
    """The moment, in UTC, of one of the accepted forms; BadDateError otherwise."""
    return parse_when_bound(text, what=what)[0]


def parse_range(since: object | None, until: object | None) -> tuple[datetime | None, datetime | None]:
    """[start, end) for a since/until pair (None: unbounded). `since` is its moment; `until`
    a day alone ends with that day, a moment includes itself (end = it + 1 microsecond, the
    finest time memrepo keeps). Whether the range is empty is the caller's to say."""
    start = parse_when(since, what="since") if since is not None else None
    end = None
    if until is not None:
        moment, day_alone = parse_when_bound(until, what="until")
        try:
            end = moment + (timedelta(days=1) if day_alone else RESOLUTION)
        except OverflowError:
            end = datetime.max.replace(tzinfo=UTC)  # until the end of 9999-12-31: nothing is later
    return start, end


def search_range(since: object | None, until: object | None) -> tuple[datetime | None, datetime | None]:
    """`parse_range` for a search, which refuses a range nothing can fall in (since not
    before until) rather than answer that nothing was found."""
    start, end = parse_range(since, until)
    if start is not None and end is not None and end <= start:
        raise MemrepoError(SEARCH_EMPTY_RANGE.format(since=since, until=until))
    return start, end
