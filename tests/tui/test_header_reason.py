"""The header's feed reason is cut between words (probe 6).

After a console resumed from a minute's stop on a busy store, its header read "◌ disconnected,
retrying (ChangeFeedHistoryLostError: The change feed moved past this )": the reason cut at 60
characters, mid-sentence and without a mark.
"""

from __future__ import annotations

from monque_tui.console.widgets.console_header import short_reason

REASON = (
    "ChangeFeedHistoryLostError: The change feed moved past this position (changes up to 812 "
    "were pruned); reload the full state"
)


def test_a_long_reason_ends_on_a_whole_word_with_an_ellipsis() -> None:
    shown = short_reason(REASON, 60)
    assert len(shown) <= 60
    assert shown.endswith("…")
    assert REASON.startswith(shown[:-1])
    assert REASON[len(shown) - 1] == " "  # the cut falls between words
    assert short_reason("ConnectionError: refused", 60) == "ConnectionError: refused"
