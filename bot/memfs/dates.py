"""Reading the moments `memrepo at`, `log --since/--until` and `compile --at` are given.

Pure. Accepted (ISO 8601, extended format, so nothing is ambiguous):

    2024-05-06                      the start of that day, 00:00:00 UTC
    2024-05-06T14:30                a time without a zone is UTC (the same answer on every machine)
    2024-05-06T14:30:15[.123456]    a space may stand for the T
    ...Z, ...+02:00, ...-0500, ...+02   with a zone
    @1714998615                     seconds since the Unix epoch, as git writes them

Anything else (05/06/2024, 2024-5-6, "yesterday", a zone name such as CET, a day that does not
exist) is refused with a message that names these forms: a guess could put memory in the
wrong day.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

from bot import messages
from bot.errors import MemrepoError

EXIT_BAD_DATE = 3

_FORM = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})"
    r"(?:[Tt ](?P<hour>\d{2}):(?P<minute>\d{2})(?::(?P<second>\d{2})(?:[.,](?P<fraction>\d{1,6}))?)?"
    r"(?P<zone>[Zz]|[+-]\d{2}(?::?\d{2})?)?)?",
    re.ASCII,
)
_EPOCH = re.compile(r"@(?P<seconds>-?\d{1,12})", re.ASCII)


class BadDateError(MemrepoError):
    """A date that is not one of the accepted forms (exit code 3)."""

    def __init__(self, value: object, reason: str | None = None) -> None:
        shown = value if isinstance(value, str) else repr(value)
        text = messages.HISTORY_BAD_DATE.format(value=shown, forms=messages.HISTORY_DATE_FORMS)
        if reason:
            text = messages.HISTORY_BAD_DATE_REASON.format(value=shown, reason=reason,
                                                           forms=messages.HISTORY_DATE_FORMS)
        super().__init__(text, exit_code=EXIT_BAD_DATE, value=value)


def _zone(text: str | None) -> timezone:
    if not text or text in ("Z", "z"):
        return UTC
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    hours, minutes = int(digits[:2]), int(digits[2:] or 0)
    if hours > 23 or minutes > 59:
        raise ValueError(f"the zone {text} is not an offset from UTC")
    return timezone(sign * timedelta(hours=hours, minutes=minutes))


def parse_when_bound(text: object) -> tuple[datetime, bool]:
    """(the moment, whether the text was a date alone): `--until DAY` uses the second part to
    cover the whole day, as `memrepo search --until` does."""
    if not isinstance(text, str):
        raise BadDateError(text)
    raw = text.strip()
    epoch = _EPOCH.fullmatch(raw)
    if epoch:
        try:
            return datetime.fromtimestamp(int(epoch.group("seconds")), UTC), False
        except (OverflowError, OSError, ValueError):
            raise BadDateError(text, messages.HISTORY_DATE_OUT_OF_RANGE) from None
    match = _FORM.fullmatch(raw)
    if match is None:
        raise BadDateError(text)
    try:
        day = datetime.strptime(match.group("date"), "%Y-%m-%d")
        if match.group("hour") is None:
            return day.replace(tzinfo=UTC), True
        fraction = (match.group("fraction") or "").ljust(6, "0")
        moment = day.replace(hour=int(match.group("hour")), minute=int(match.group("minute")),
                             second=int(match.group("second") or 0), microsecond=int(fraction or 0),
                             tzinfo=_zone(match.group("zone")))
        moment.astimezone(UTC)  # a moment outside the years datetime can show in UTC
    except (ValueError, OverflowError) as exc:
        raise BadDateError(text, str(exc)) from None
    return moment, False


def parse_when(text: str) -> datetime:
    """A timezone-aware moment from one of the accepted forms; BadDateError otherwise."""
    return parse_when_bound(text)[0]
