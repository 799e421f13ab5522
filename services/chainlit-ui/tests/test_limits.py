"""A typed message over the size limit is answered, not sent and not lost."""

from __future__ import annotations

from lgos_chainlit.config import UIConfig
from lgos_chainlit.limits import SOCKET_FRAME_BYTES, oversized_message


def test_a_message_over_the_limit_is_refused_naming_its_size_and_the_limit():
    notice = oversized_message("x" * (3 * 1024 * 1024), 2 * 1024 * 1024)

    assert notice is not None
    assert notice.level == "error"
    assert "Your message is 3.0 MB" in notice.text
    assert "at most 2.0 MB" in notice.text


def test_the_limit_counts_utf8_bytes_not_characters():
    accented = "é" * 600  # 1,200 bytes

    assert oversized_message(accented, 1200) is None
    refused = oversized_message(accented, 1199)
    assert refused is not None
    assert "1 KB" in refused.text


def test_the_largest_allowed_limit_still_fits_a_socket_frame_with_room_to_spare():
    # A message over the limit must reach the app to be answered: the frame
    # carries it JSON-escaped, which can double plain text.
    largest = UIConfig.model_fields["MAX_MESSAGE_BYTES"].metadata
    le = next(rule.le for rule in largest if hasattr(rule, "le"))

    assert 2 * le <= SOCKET_FRAME_BYTES
    assert le >= UIConfig().MAX_MESSAGE_BYTES
