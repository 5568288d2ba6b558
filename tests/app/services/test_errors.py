"""How long a refusal tells the client to wait (``Retry-After``), the one rule the API and the pages share."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.services.accounts.throttle import LoginThrottled
from app.services.errors import InvalidInput, QuotaExhausted

NOW = datetime(2026, 12, 1, 23, 59, 57, 700_000, tzinfo=UTC)


def test_a_daily_limit_is_waited_out_in_whole_seconds_rounded_up() -> None:
    # 2.3 s until midnight: waiting 2 s would come back before the reset, so the answer is 3.
    assert QuotaExhausted("used up", resets_at=NOW + timedelta(seconds=2.3)).retry_after(NOW) == 3
    assert QuotaExhausted("used up", resets_at=NOW + timedelta(seconds=2)).retry_after(NOW) == 2
    # A reset already past (the clock moved on while answering) still asks for a second, never 0 or less.
    assert QuotaExhausted("used up", resets_at=NOW - timedelta(seconds=5)).retry_after(NOW) == 1
    assert QuotaExhausted("used up", resets_at=NOW + timedelta(milliseconds=1)).retry_after(NOW) == 1


def test_only_a_refusal_that_waiting_lifts_names_a_wait() -> None:
    assert QuotaExhausted("the total limit is used up", resets_at=None).retry_after(NOW) is None
    assert InvalidInput("bad file").retry_after(NOW) is None
    assert LoginThrottled("too many", wait=30).retry_after(NOW) == 30
    assert LoginThrottled("too many", wait=30).to_dict()["retry_after"] == 30
